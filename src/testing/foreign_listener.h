// Tests only: a loopback listener that is not `rdmacheck serve`, for the
// client's view of a wrong -p. It accepts one connection at a time and then
// sends a banner (as sshd does), says nothing (as an HTTP server waiting for
// a request), or closes at once; it waits for the client to hang up, never
// for a time. kSilentOnce is silent on its first connection and greets as a
// keyless `rdmacheck serve` on the later ones (a greeting lost to a flap);
// kResetOnce greets as a keyed server (key kResetOnceKey) but resets its
// first connection when the client's proof arrives (as a server whose
// handshake deadline ran out during an outage), and greets and checks the
// proof on the later ones.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "base/fd.h"
#include "net/tcp.h"
#include "proto/auth.h"
#include "proto/messages.h"

namespace rdmacheck::test_util {

class ForeignListener {
 public:
  enum class Manner { kBanner, kSilent, kCloseAtOnce, kSilentOnce, kResetOnce };

  static inline const std::string kResetOnceKey = std::string(32, 'k');
  explicit ForeignListener(Manner m) : manner_(m), sock_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!sock_.valid() || ::bind(sock_.get(), reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(sock_.get(), 8) != 0 ||
        ::getsockname(sock_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        ::pipe(stop_) != 0) {
      throw std::runtime_error("ForeignListener: cannot listen on loopback");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~ForeignListener() {
    char c = 0;
    (void)!::write(stop_[1], &c, 1);
    thread_.join();
    ::close(stop_[0]);
    ::close(stop_[1]);
  }
  ForeignListener(const ForeignListener&) = delete;
  ForeignListener& operator=(const ForeignListener&) = delete;
  uint16_t port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  // Waits for FD to be readable or for the destructor; false on the latter.
  bool wait(int fd) const {
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    while (::poll(p, 2, -1) < 0) {
    }
    return (p[1].revents & POLLIN) == 0;
  }
  void loop() {
    while (wait(sock_.get())) {
      Channel ch(Fd(::accept(sock_.get(), nullptr, nullptr)));
      const Fd& c = ch.fd();
      if (!c.valid()) continue;
      const int n = ++accepted_;
      if (manner_ == Manner::kCloseAtOnce) continue;
      if (manner_ == Manner::kResetOnce && n == 1) {
        const nlohmann::json greeting = {{"type", proto::type_name(proto::MessageType::kGreeting)},
                                         {"version", proto::kVersion},
                                         {"auth", "psk"},
                                         {"nonce", std::string(2 * proto::kNonceBytes, '1')}};
        (void)send_frame(c, greeting, deadline_in(std::chrono::seconds(5)));
        char b[1];
        if (wait(c.get())) (void)::recv(c.get(), b, 1, MSG_PEEK);  // the proof came
        const linger l{1, 0};                                      // close with a RST
        ::setsockopt(c.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
        continue;
      }
      if (manner_ == Manner::kResetOnce) {
        (void)proto::greet_client(ch,
                                  proto::ServerKeys{{proto::Psk{"reset-once", kResetOnceKey}}, {}},
                                  deadline_in(std::chrono::seconds(5)));
      }
      if (manner_ == Manner::kSilentOnce && n > 1) {
        (void)proto::greet_client(ch, {}, deadline_in(std::chrono::seconds(5)));
      }
      if (manner_ == Manner::kBanner) {
        const std::string banner = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n";
        (void)!::send(c.get(), banner.data(), banner.size(), MSG_NOSIGNAL);
      }
      // Until the client hangs up (its read of our silence ends) or the test ends.
      char buf[256];
      while (wait(c.get()) && ::recv(c.get(), buf, sizeof buf, 0) > 0) {
      }
    }
  }

  Manner manner_;
  Fd sock_;
  int stop_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace rdmacheck::test_util
