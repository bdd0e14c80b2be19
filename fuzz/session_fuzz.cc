// libFuzzer target for a whole `rdmacheck serve` session (serve/session.h):
// everything a client can send once it is past the greeting, which a server
// without keys gives everyone: any frames in any order (a hello of any test,
// a doctor request, the TCP probes, garbage, a frame cut off). The input is
// what the client sends, already on a socketpair when the session starts;
// then the client's end stops sending, reads what the server says (so that
// the server never blocks on a full socket) and closes. The session runs on
// a captured host without RDMA (tests/fixtures/no-rdma-vm), as this machine
// is: an RDMA test is admitted, charged to the pinned budget and refused
// with doctor's finding; doctor requests are answered from the capture; the
// TCP echo and stream are served. It must end within its deadlines with an
// end line; a crash, a sanitizer report or a hang fails.
//
// Built in the sanitizer build (scripts/asan-build: clang, ASan+UBSan, the
// floors with libFuzzer's coverage), like every fuzz target: a session needs
// every floor up to serve, which that build has compiled already.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <variant>

#include "base/deadline.h"
#include "base/fd.h"
#include "doctor/check.h"
#include "net/channel.h"
#include "serve/session.h"

namespace {

using namespace rdmacheck;

struct World {
  serve::ServerOptions o;
  serve::Shared shared;
  std::FILE* devnull;
  serve::Log log;
  static serve::ServerOptions options() {
    serve::ServerOptions o;
    o.fs = FsRoot(std::string(RDMACHECK_FIXTURES) + "/no-rdma-vm");
    o.insecure = true;
    o.handshake_timeout = std::chrono::milliseconds(200);
    o.session_timeout = std::chrono::milliseconds(1000);
    o.limits.pinned_bytes = 64u << 20;
    return o;
  }
  World()
      : o(options()),
        shared{serve::DoctorCache(o.fs), conn::TrafficPool(o.max_rate),
               doctor::no_rdma_device(o.fs)},
        devnull(std::fopen("/dev/null", "w")),
        log(devnull) {}
};

// Reads and drops what the server sends until it closes or D passes.
void drain(const Fd& fd, Deadline d) {
  char buf[65536];
  while (Clock::now() < d) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    if (::read(fd.get(), buf, sizeof buf) <= 0) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();         // one doctor capture read for the whole run
  if (size > 65536) return 0;                // a socketpair buffer holds it without a reader
  if (!world->shared.no_rdma) std::abort();  // the capture must keep verbs out of the session
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  Channel server{Fd(sv[0])};
  Fd client(sv[1]);
  if (size > 0 && ::write(client.get(), data, size) != static_cast<ssize_t>(size)) return 0;
  ::shutdown(client.get(), SHUT_WR);
  serve::Admission admission(world->o.limits);
  {
    auto entered = admission.enter("192.0.2.7");
    if (!std::holds_alternative<serve::Admission::Ticket>(entered)) std::abort();
    auto& ticket = std::get<serve::Admission::Ticket>(entered);
    std::thread s([&] {
      (void)serve::session(1, server, "192.0.2.7:40000", world->o, nullptr, ticket, world->shared,
                           world->log);
      ::shutdown(server.fd().get(), SHUT_RDWR);
    });
    drain(client, deadline_in(std::chrono::seconds(3)));
    client = Fd();
    s.join();
  }
  // Every slot and byte the session took is back once its ticket went.
  const auto u = admission.usage();
  if (u.sessions != 0 || u.startups != 0 || u.probes != 0 || u.pinned != 0) std::abort();
  return 0;
}
