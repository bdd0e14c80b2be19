#include "check/report.h"

#include <fmt/core.h>

#include "conn/ping_print.h"
#include "perf/cpu_time.h"
#include "perf/report.h"
#include "perf/units.h"

namespace rdmacheck::check {
namespace {

const char* kLayerTitles[] = {"device", "connection", "performance"};

std::string paint(const std::string& s, LayerStatus st, bool color) {
  const Tone tone = st == LayerStatus::kPass   ? Tone::kGood
                    : st == LayerStatus::kWarn ? Tone::kWarn
                    : st == LayerStatus::kFail ? Tone::kBad
                                               : Tone::kMuted;
  return rdmacheck::paint(s, tone, TextStyle{.color = color});
}

std::string facts_line(const char* who, const proto::HostFacts& f) {
  return fmt::format(
             "  {:<5}: {} {} port {} GID[{}] {} {} mtu {} netdev {} (mtu {}) rate {} Gb/s\n", who,
             f.hostname, f.device, f.port, f.gid_index, f.gid_type, f.gid, f.active_mtu,
             f.netdev.empty() ? "-" : f.netdev, f.netdev_mtu, f.rate_gbps) +
         (f.choice.empty() ? "" : fmt::format("         chosen: {}\n", f.choice));
}

std::string timeline(const std::vector<proto::Step>& steps) {
  std::string out;
  for (const auto& s : steps) {
    if (!out.empty()) out += " -> ";
    out += s.ok ? fmt::format("{} ({:.0f} us)", s.name, s.usec) : s.name + " FAILED";
  }
  return out.empty() ? "(none)" : out;
}

std::string ping_line(const conn::PingReport& p) {
  const auto& o = p.options;
  const std::string what =
      o.cm ? "rdma_cm ping" : (o.transport == proto::Transport::kUd ? "UD ping" : "RC ping");
  if (p.obs.failed != conn::Stage::kDone) {
    return fmt::format("  {}: FAILED at {}: {}\n", what, name_of(p.obs.failed), p.obs.error);
  }
  std::string out =
      fmt::format("  {}: {}/{} answered, rtt min/median/max {:.1f}/{:.1f}/{:.1f} us\n", what,
                  p.stats.received, p.stats.sent, p.stats.min, p.stats.median, p.stats.max);
  out += fmt::format("    QP timeline here: {}\n    QP timeline peer: {}\n",
                     timeline(p.local_timeline), timeline(p.peer_timeline));
  if (!p.obs.ladder.empty()) {
    out += "    size ladder:";
    for (const auto& l : p.obs.ladder) out += fmt::format(" {}B {}", l.size, l.ok ? "ok" : "FAIL");
    out += "\n";
  }
  for (const auto& t : p.probes) out += "    " + conn::describe(t) + "\n";
  if (o.transport != proto::Transport::kUd)
    out += "    RC ACK timeout: " + conn::describe(p.ack) + "\n";
  return out;
}

// ", CPU 100 % of a core here, 3 % on the server" when the test measured it.
std::string cpu_text(const perf::PerfReport& p) {
  if (!p.local_cpu || !p.peer_cpu) return "";
  return fmt::format(", CPU {:.0f} % of a core here, {:.0f} % on the server",
                     perf::cpu_percent(p.local_cpu->cpu_s, p.local_cpu->wall_s),
                     perf::cpu_percent(p.peer_cpu->cpu_s, p.peer_cpu->wall_s));
}

std::string perf_line(const perf::PerfReport& p) {
  const auto& s = p.options.spec;
  const std::string what = fmt::format("{} {}", name_of(s.op), name_of(s.kind));
  if (!p.ok) return fmt::format("  {}: FAILED at {}: {}\n", what, name_of(p.failed), p.error);
  std::string out;
  // Each figure with its spread, so a stable one reads apart from a noisy one.
  for (const auto& b : p.bw) {
    out += fmt::format("  {} {} B: {} average, {} peak, {}{}\n", what, b.size,
                       perf::gbps_text(b.avg_gbps), perf::gbps_text(b.peak_gbps),
                       perf::rate_text(b.mpps), cpu_text(p));
    if (const std::string spread = perf::spread_text(b); !spread.empty()) {
      out += "    " + spread + "\n";
    }
  }
  for (const auto& l : p.lat) {
    out += fmt::format(
        "  {} {} B: {} min/median/p99/max {:.2f}/{:.2f}/{:.2f}/{:.2f} us over {} round trips\n",
        what, l.size, l.half_round_trip ? "half RTT" : "RTT", l.stats.min, l.stats.median,
        l.stats.p99, l.stats.max, l.stats.n);
  }
  return out;
}

// Bandwidth under loss means little without the loss: the rate layer 2 measured.
std::string loss_context(const CheckReport& r) {
  std::string out;
  for (const auto& p : r.pings) {
    for (const auto& t : p.probes) {
      if (t.lost() > 0 || t.slow > 0) out += "    " + conn::describe(t) + "\n";
    }
  }
  return out.empty() ? out : "  measured under the loss layer 2 saw:\n" + out;
}

}  // namespace

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : r.layers) {
    layers.push_back({{"layer", layer_name(l.layer)},
                      {"status", layer_status_name(l.status)},
                      {"not_run_reason", l.not_run_reason},
                      {"seconds", l.seconds},
                      {"findings", rdmacheck::to_json(l.findings)}});
  }
  nlohmann::json pings = nlohmann::json::array();
  for (const auto& p : r.pings) pings.push_back(conn::to_json(p));
  nlohmann::json perfs = nlohmann::json::array();
  for (const auto& p : r.perf) perfs.push_back(perf::to_json(p));
  nlohmann::json top = nlohmann::json::array();
  for (const auto& f : top_findings(r, 5)) top.push_back(rdmacheck::to_json(f));
  return {
      {"command", "check"},
      {"host", r.options.target.host},
      {"port", r.options.target.tcp_port},
      {"layers", layers},
      {"top_findings", top},
      {"local", r.local ? proto::to_json(*r.local) : nlohmann::json(nullptr)},
      {"peer", r.peer ? proto::to_json(*r.peer) : nlohmann::json(nullptr)},
      {"local_doctor", r.local_doctor},
      {"peer_doctor", r.peer_doctor},
      {"pings", pings},
      {"tcp_probe", r.tcp_probe ? conn::to_json(*r.tcp_probe) : nlohmann::json(nullptr)},
      {"perf", perfs},
      {"tcp_baseline", r.tcp_baseline ? perf::to_json(*r.tcp_baseline) : nlohmann::json(nullptr)},
      {"priority", to_json(r.priority)},
      {"expired_in", r.expired_in},
      {"elapsed_ms", r.elapsed_ms}};
}

namespace {

std::string layer_time(const LayerReport& l) {
  return l.status == LayerStatus::kNotRun ? fmt::format("({})", l.not_run_reason)
                                          : fmt::format("({:.1f} s)", l.seconds);
}

std::string result_line(const CheckReport& r, bool color) {
  const int st = exit_status(r);
  const LayerStatus overall = st == 2   ? LayerStatus::kFail
                              : st == 1 ? LayerStatus::kWarn
                                        : LayerStatus::kPass;
  return fmt::format("result: {} (exit status {})\n",
                     paint(layer_status_text(overall), overall, color), st);
}

std::string title_line(const CheckReport& r) {
  return fmt::format("rdmacheck check {} (port {})\n", r.options.target.host,
                     r.options.target.tcp_port);
}

std::string expired_line(const CheckReport& r) {
  if (r.expired_in.empty()) return {};
  return fmt::format("  the --timeout of {} s passed during {}\n", r.options.timeout.count(),
                     r.expired_in);
}

// --brief: a few lines to paste into a ticket; the finding to fix first is
// the only one shown, with its fix.
std::string brief_text(const CheckReport& r, bool color) {
  std::string out = title_line(r);
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const auto& l = r.layers[i];
    out += fmt::format("  {} {:<12} {} {}\n", i + 1, kLayerTitles[i],
                       paint(layer_status_text(l.status), l.status, color), layer_time(l));
  }
  const auto top = top_findings(r, 1);
  if (!top.empty()) {
    const auto& f = top[0];
    out += fmt::format("  first to fix: {} {}{}: {}\n", severity_name(f.severity), id_name(f),
                       f.host.empty() ? "" : " [" + f.host + "]", f.summary);
    if (!f.fix.empty()) out += "  fix: " + f.fix + "\n";
  }
  return out + expired_line(r) + result_line(r, color);
}

}  // namespace

std::string format_text(const CheckReport& r, const TextStyle& style) {
  const bool color = style.color;
  if (style.detail == Detail::kBrief) return brief_text(r, color);
  std::string out = title_line(r);
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const auto& l = r.layers[i];
    out += fmt::format("\n== layer {}: {} == {} {}\n", i + 1, kLayerTitles[i],
                       paint(layer_status_text(l.status), l.status, color), layer_time(l));
    if (i == 0) {
      if (r.local) out += facts_line("here", *r.local);
      if (r.peer) out += facts_line("peer", *r.peer);
      // Chosen once the device layer passed (empty before).
      if (!r.priority.why.empty()) {
        out += fmt::format("  priority: traffic class {}, service level {} ({}: {})\n",
                           r.priority.traffic_class, r.priority.sl, name_of(r.priority.source),
                           r.priority.why);
      }
    }
    if (i == 1) {
      for (const auto& p : r.pings) out += ping_line(p);
      if (r.tcp_probe) out += "  " + conn::describe(*r.tcp_probe) + "\n";
    }
    if (i == 2) {
      for (const auto& p : r.perf) out += perf_line(p);
      if (r.tcp_baseline) out += "  " + perf::describe(*r.tcp_baseline) + "\n";
      if (!r.perf.empty()) out += loss_context(r);
    }
    for (const auto& f : l.findings) {
      if (f.severity >= Severity::kInfo) out += format_finding(f);
    }
  }
  out += "\n== summary ==\n";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    out += fmt::format("  {:<12} {}\n", kLayerTitles[i],
                       paint(layer_status_text(r.layers[i].status), r.layers[i].status, color));
  }
  // The findings are printed once, in their layer above: the summary names
  // the ones to fix first by id only.
  const auto top = top_findings(r, 5);
  if (!top.empty()) {
    std::string ids;
    for (const auto& f : top) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", id_name(f));
    out += "  fix first (see above): " + ids + "\n";
  }
  out += expired_line(r);
  out += fmt::format("  total {:.1f} s\n", r.elapsed_ms / 1000);
  return out + result_line(r, color);
}

}  // namespace rdmacheck::check
