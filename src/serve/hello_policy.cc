#include "serve/hello_policy.h"

#include <fmt/core.h>

#include <algorithm>

#include "perf/spec.h"

namespace rdmacheck::serve {

namespace {

// Why the server's own direction of a -b test, as planned, is over --max-rate.
std::optional<std::string> over_max_rate(const proto::Hello& hello, const conn::TrafficCap& cap) {
  const auto& p = hello.test.perf;
  if (!p || !p->bidir) return std::nullopt;
  uint64_t bytes = 0;
  for (uint32_t size : p->sizes) bytes += size;
  const double secs =
      static_cast<double>(p->duration_ms) / 1000.0 * static_cast<double>(p->sizes.size());
  if (p->iterations > 0 && bytes > cap.bytes / p->iterations) {
    return fmt::format(
        "the test would make this server send {} MiB; it sends at most {} MiB per "
        "session (--max-rate)",
        (bytes >> 20) * p->iterations, cap.bytes >> 20);
  }
  if (secs > static_cast<double>(cap.seconds.count())) {
    return fmt::format(
        "the test would make this server send for {:.0f} s; it sends for at most {} "
        "s per session (--max-rate)",
        secs, cap.seconds.count());
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> refusal(const proto::Hello& hello, const ServerOptions& o,
                                   const CmAcceptor* acceptor) {
  if (hello.test.max_size > o.max_bytes) {
    return fmt::format("asked for {} bytes, this server allows {} per session", hello.test.max_size,
                       o.max_bytes);
  }
  // A UD message is one datagram, 4096 bytes on the largest MTU: a bigger
  // buffer would only pin memory (the client refuses such a size itself).
  if (hello.test.transport == proto::Transport::kUd && hello.test.max_size > 4096) {
    return fmt::format("asked for {} bytes over UD; a datagram is at most 4096",
                       hello.test.max_size);
  }
  if (hello.test.cm && acceptor == nullptr) {
    return "this server has no rdma_cm listener (see its start-up log)";
  }
  // The client's own rules, again: a crafted hello must not make a loop spin.
  if (hello.test.perf) {
    if (auto why = perf::validate(perf::spec_of(hello.test))) return "invalid test: " + *why;
  }
  return over_max_rate(hello, o.max_rate);
}

conn::EndpointOptions endpoint_options(const proto::Hello& hello, const ServerOptions& o,
                                       const Channel& sock) {
  conn::EndpointOptions eo;
  eo.fs = o.fs;
  eo.dev = o.dev;
  eo.local_address = local_address(sock);  // the address the client connected to
  eo.peer_address = peer_address(sock);
  eo.server = true;
  eo.transport = hello.test.transport;
  eo.buffer_size = hello.test.max_size;
  // Only the access the test needs: nothing remote for send, and for a ping
  // only what an RDMA-write echo needs.
  eo.access = proto::info(hello.test.op).remote_access;
  eo.depth = hello.test.depth;
  // A UD ping's echoes: several receives, each in its own slot, so a
  // duplicated or late request never leaves the QP without one (ping.cc).
  if (hello.test.kind == proto::TestKind::kPing && hello.test.transport == proto::Transport::kUd) {
    eo.recv_slots = conn::kUdPingRecvSlots;
  }
  eo.traffic_class = hello.test.traffic_class;  // the client's priority, both ways
  eo.sl = hello.test.sl;
  if (const auto& p = hello.test.perf) {
    // -b: our queue also carries the test towards the client.
    if (p->bidir) eo.depth = std::max(eo.depth, p->tx_depth);
    // Echoes and the -b direction post small messages inline, as the client does.
    eo.inline_size = p->inline_size;
  }
  return eo;
}

Deadline request_end(const proto::Hello& hello, Deadline session_end, Deadline now) {
  if (hello.test.budget_ms == 0) return session_end;
  return std::min(session_end,
                  now + std::chrono::milliseconds(hello.test.budget_ms) + kBudgetGrace);
}

}  // namespace rdmacheck::serve
