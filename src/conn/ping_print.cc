#include "conn/ping_print.h"

#include <fmt/core.h>

namespace rdmacheck::conn {
namespace {

std::string timeline_text(const std::vector<proto::Step>& steps) {
  std::string out;
  for (const auto& s : steps) {
    if (!out.empty()) out += " -> ";
    out += s.ok ? fmt::format("{} ({:.0f} us)", s.name, s.usec) : fmt::format("{} FAILED", s.name);
  }
  return out.empty() ? "(none)" : out;
}

nlohmann::json facts_json(const std::optional<proto::HostFacts>& f) {
  return f ? proto::to_json(*f) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const PingReport& r) {
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : r.samples) {
    samples.push_back({{"seq", s.seq}, {"size", s.size}, {"rtt_us", s.rtt_us}});
  }
  nlohmann::json ladder = nlohmann::json::array();
  for (const auto& l : r.obs.ladder) {
    ladder.push_back({{"size", l.size}, {"ok", l.ok}, {"rtt_us", l.rtt_us}, {"error", l.error}});
  }
  return {
      {"command", "ping"},
      {"host", r.options.target.host},
      {"port", r.options.target.tcp_port},
      {"transport", name_of(r.options.transport)},
      {"op", r.options.write ? "write" : "send"},
      {"ok", r.obs.failed == Stage::kDone},
      {"failed_stage", r.obs.failed == Stage::kDone
                           ? nlohmann::json(nullptr)
                           : nlohmann::json(std::string(name_of(r.obs.failed)))},
      {"error", r.obs.error},
      {"local", facts_json(r.obs.local)},
      {"peer", facts_json(r.obs.peer)},
      {"timeline",
       {{"local", proto::to_json(r.local_timeline)}, {"peer", proto::to_json(r.peer_timeline)}}},
      {"samples", samples},
      {"summary",
       {{"sent", r.stats.sent},
        {"received", r.stats.received},
        {"min_us", r.stats.min},
        {"avg_us", r.stats.avg},
        {"median_us", r.stats.median},
        {"p99_us", r.stats.p99},
        {"max_us", r.stats.max}}},
      {"ladder", ladder},
      {"probes", to_json(r.probes)},
      {"ack_timeout",
       r.options.transport == proto::Transport::kUd ? nlohmann::json(nullptr) : to_json(r.ack)},
      {"warnings", r.warnings},
      {"findings", rdmacheck::to_json(r.findings)},
      {"elapsed_ms", r.elapsed_ms},
  };
}

std::string format_text(const PingReport& r, const TextStyle& /*style*/) {
  std::string out;
  const auto& o = r.options;
  out += fmt::format("PING {} port {}: {} {} of {} bytes\n", o.target.host, o.target.tcp_port,
                     o.transport == proto::Transport::kUd ? "UD" : "RC",
                     o.write ? "RDMA write" : "send", o.size);
  auto facts_line = [&](const char* side, const proto::HostFacts& f) {
    out += fmt::format("  {:<5} : {} {} port {} GID[{}] {} {} mtu {} netdev {} (mtu {}){}\n", side,
                       f.hostname, f.device, f.port, f.gid_index, f.gid_type, f.gid, f.active_mtu,
                       f.netdev.empty() ? "-" : f.netdev, f.netdev_mtu,
                       f.traffic_class != 0 || f.sl != 0
                           ? fmt::format(" tclass {} sl {}", f.traffic_class, f.sl)
                           : "");
  };
  if (r.obs.local) facts_line("local", *r.obs.local);
  if (r.obs.peer) facts_line("peer", *r.obs.peer);
  if (r.obs.local && !r.obs.local->choice.empty()) {
    out += "  chosen here : " + r.obs.local->choice + "\n";
  }
  if (r.obs.peer && !r.obs.peer->choice.empty()) {
    out += "  chosen peer : " + r.obs.peer->choice + "\n";
  }
  for (const auto& w : r.warnings) out += "  warning: " + w + "\n";
  out += fmt::format("  QP timeline here : {}\n", timeline_text(r.local_timeline));
  out += fmt::format("  QP timeline peer : {}\n", timeline_text(r.peer_timeline));
  for (const auto& s : r.samples) {
    out += fmt::format("{} bytes: seq={} rtt={:.1f} us\n", s.size, s.seq, s.rtt_us);
  }
  const auto& st = r.stats;
  const int loss = st.sent == 0 ? 0 : 100 * (st.sent - st.received) / st.sent;
  out += fmt::format("--- {} rdmacheck ping statistics ---\n", o.target.host);
  out += fmt::format("{} sent, {} received, {}% loss", st.sent, st.received, loss);
  if (st.received > 0) {
    out += fmt::format(", rtt min/avg/median/p99/max = {:.1f}/{:.1f}/{:.1f}/{:.1f}/{:.1f} us",
                       st.min, st.avg, st.median, st.p99, st.max);
  }
  out += "\n";
  if (!r.obs.ladder.empty()) {
    out += "size ladder:";
    for (const auto& l : r.obs.ladder) {
      out += l.ok ? fmt::format(" {}B ok", l.size) : fmt::format(" {}B FAIL", l.size);
    }
    out += "\n";
  }
  for (const auto& t : r.probes) out += describe(t) + "\n";
  if (o.transport != proto::Transport::kUd && r.obs.peer) {
    out += "RC ACK timeout: " + describe(r.ack) + "\n";
  }
  if (r.obs.failed != Stage::kDone) {
    out += fmt::format("failed at {}: {}\n", name_of(r.obs.failed), r.obs.error);
  }
  for (const auto& f : r.findings) out += format_finding(f);
  out += fmt::format("result: {} ({:.0f} ms)\n", r.obs.failed == Stage::kDone ? "PASS" : "FAIL",
                     r.elapsed_ms);
  return out;
}

int exit_status(const PingReport& r) {
  if (r.obs.failed != Stage::kDone) return 2;
  const int s = rdmacheck::exit_status(r.findings);
  return s != 0 ? s : (r.warnings.empty() ? 0 : 1);
}

}  // namespace rdmacheck::conn
