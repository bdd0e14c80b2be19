// Test-only (proto/auth_tls_test.cc, proto/auth_cert_test.cc): one
// connection over a socketpair. The server greets with KEYS and, admitted,
// reads one frame; the client meets it with KEY, dialling NAME, and,
// admitted, sends a doctor request.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <future>
#include <optional>
#include <string>

#include "net/tcp.h"
#include "proto/auth.h"
#include "proto/messages.h"

namespace rdmacheck::proto {

struct Meeting {
  Result<Admitted, AuthError> server = AuthError{};
  Result<Unit, AuthError> client = AuthError{};
  std::string server_protection;
  std::string client_protection;
  nlohmann::json received;                   // the frame the server read past the greeting
  std::vector<std::string> client_expiring;  // expiring_certificates, as the client saw them
};

inline Meeting meet(const ServerKeys& keys, const std::optional<Psk>& key,
                    const std::string& name = "h1") {
  using namespace std::chrono_literals;
  int sv[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Channel s{Fd(sv[0])};
  Channel c{Fd(sv[1])};
  Meeting run;
  auto server = std::async(std::launch::async, [&]() {
    run.server = greet_client(s, keys, deadline_in(5s));
    run.server_protection = s.protection();
    if (run.server) {
      auto f = recv_frame(s, deadline_in(5s));
      if (f) run.received = *f;
    }
    s = Channel();  // a client waiting for more sees the end
  });
  run.client = meet_server(c, key, name, deadline_in(5s));
  run.client_protection = c.protection();
  run.client_expiring = expiring_certificates(c, std::chrono::system_clock::now());
  if (run.client) EXPECT_TRUE(send_frame(c, doctor_request(), deadline_in(5s)).ok());
  server.get();
  return run;
}

}  // namespace rdmacheck::proto
