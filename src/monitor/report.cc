#include "monitor/report.h"

#include <fmt/core.h>

#include <algorithm>

namespace rdmacheck::monitor {
namespace {

nlohmann::json null_if_empty(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json rtt_json(std::vector<double> rtt_s) {
  if (rtt_s.empty()) return nullptr;
  std::sort(rtt_s.begin(), rtt_s.end());
  return {{"min", rtt_s.front() * 1e6},
          {"median", rtt_s[rtt_s.size() / 2] * 1e6},
          {"max", rtt_s.back() * 1e6}};
}

std::string what(const ProbeResult& p) {
  switch (p.outcome) {
    case Outcome::kUp:
    case Outcome::kLoss: {
      std::vector<double> v = p.rtt_s;
      std::sort(v.begin(), v.end());
      std::string s = fmt::format("{}/{} answered", p.answered, p.sent);
      if (p.lost > 0) s += fmt::format(", {} lost", p.lost);
      if (!v.empty()) {
        s += fmt::format("; round trip median {:.0f} us (min {:.0f}, max {:.0f})",
                         v[v.size() / 2] * 1e6, v.front() * 1e6, v.back() * 1e6);
      }
      if (!p.turnaround_s.empty()) {
        std::vector<double> t = p.turnaround_s;
        std::sort(t.begin(), t.end());
        s += fmt::format(", the peer's turnaround median {:.0f} us", t[t.size() / 2] * 1e6);
      }
      return s;
    }
    case Outcome::kDown:
      return fmt::format("0/{} answered, {} lost: the host or its path ({}: {})", p.sent, p.lost,
                         p.stage, p.error);
    case Outcome::kStall:
      return fmt::format(
          "{}/{} answered, {} unanswered: the peer's host stopped answering, not "
          "the path ({}: {})",
          p.answered, p.sent, p.unanswered, p.stage, p.error);
    case Outcome::kError:
      return fmt::format("no probe sent ({}: {})", p.stage, p.error);
  }
  return {};
}

}  // namespace

nlohmann::json to_json(const MonitorReport& r) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& p : r.rounds) {
    rounds.push_back({{"peer", p.peer},
                      {"transport", p.transport},
                      {"outcome", std::string(outcome_name(p.outcome))},
                      {"sent", p.sent},
                      {"answered", p.answered},
                      {"lost", p.lost},
                      {"unanswered", p.unanswered},
                      {"rtt_us", rtt_json(p.rtt_s)},
                      {"turnaround_us", rtt_json(p.turnaround_s)},
                      {"stage", null_if_empty(p.stage)},
                      {"error", null_if_empty(p.error)},
                      {"elapsed_s", p.elapsed_s},
                      {"device", null_if_empty(p.device)},
                      {"findings", to_json(p.findings)}});
  }
  return {{"prober", r.prober},
          {"peers", r.peers},
          {"metrics_listen", null_if_empty(r.metrics_listen)},
          {"rounds", rounds}};
}

std::string format_text(const MonitorReport& r, const TextStyle& /*style*/) {
  std::string out = fmt::format("monitor from {}: {} peer{}\n", r.prober, r.peers.size(),
                                r.peers.size() == 1 ? "" : "s");
  size_t width = 0;
  for (const auto& p : r.rounds) width = std::max(width, p.peer.size());
  for (const auto& p : r.rounds) {
    out += fmt::format("  {:<{}}  {}  {:<5}  {}\n", p.peer, width, p.transport,
                       outcome_name(p.outcome), what(p));
    for (const auto& f : p.findings) {
      out += fmt::format("    {} {}: {}\n", severity_name(f.severity), id_name(f), f.summary);
    }
  }
  return out;
}

}  // namespace rdmacheck::monitor
