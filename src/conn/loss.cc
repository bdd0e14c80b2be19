#include "conn/loss.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace rdmacheck::conn {

Interval wilson(int k, int n) {
  if (n <= 0) return {0, 1};
  constexpr double z = 1.96;
  const double nn = n;
  const double p = k / nn;
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

Interval ProbeTally::loss() const {
  const Interval ok = wilson(answered, sent);
  return {1 - ok.high, 1 - ok.low};
}

void count_probe(std::vector<ProbeTally>& t, const std::string& transport, uint32_t size,
                 bool answered, bool slow) {
  auto it = std::find_if(t.begin(), t.end(), [&](const ProbeTally& x) {
    return x.transport == transport && x.size == size;
  });
  if (it == t.end()) {
    t.push_back(ProbeTally{transport, size});
    it = t.end() - 1;
  }
  ++it->sent;
  if (answered) ++it->answered;
  if (answered && slow) ++it->slow;
}

std::string describe(const ProbeTally& t) {
  std::string name = t.transport;
  std::transform(name.begin(), name.end(), name.begin(), ::toupper);
  const Interval l = t.loss();
  std::string out = fmt::format(
      "{} {} B: {}/{} answered, loss {:.1f} % (95 % interval {:.1f}-{:.1f} %)", name, t.size,
      t.answered, t.sent, t.sent == 0 ? 0.0 : 100.0 * t.lost() / t.sent, 100 * l.low, 100 * l.high);
  if (t.slow > 0) out += fmt::format(", {} answered only after an ACK timeout", t.slow);
  return out;
}

nlohmann::json to_json(const std::vector<ProbeTally>& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : t) {
    const Interval l = x.loss();
    out.push_back({{"transport", x.transport},
                   {"size", x.size},
                   {"sent", x.sent},
                   {"answered", x.answered},
                   {"slow", x.slow},
                   {"loss", x.sent == 0 ? 0.0 : static_cast<double>(x.lost()) / x.sent},
                   {"loss_low", l.low},
                   {"loss_high", l.high}});
  }
  return out;
}

std::vector<Finding> loss_findings(const std::vector<ProbeTally>& t, const std::string& host) {
  std::vector<std::string> evidence;
  int lost = 0;
  int sent = 0;
  for (const auto& x : t) {
    if (x.transport == "tcp") continue;
    const bool partial = x.answered > 0 && x.lost() > 0;
    if (partial || x.slow > 0) evidence.push_back(describe(x));
    if (x.answered > 0) {
      lost += x.lost();
      sent += x.sent;
    }
  }
  if (evidence.empty()) return {};
  const double rate = sent == 0 ? 0.0 : 100.0 * lost / sent;
  Finding f = make_finding(
      FindingId::kRoceLoss, Severity::kWarn, Layer::kConnection,
      lost > 0 ? fmt::format("RoCE packets to or from {} are lost ({} of {} probes, {:.1f} %), "
                             "but traffic gets through: RC recovers by retransmitting, slowly",
                             host, lost, sent, rate)
               : fmt::format("RC probes to {} needed retransmissions: packets are lost or ACKs "
                             "come late, but traffic gets through",
                             host));
  f.evidence = std::move(evidence);
  f.fix =
      "find where packets drop (switch port and NIC discard counters, rdmacheck doctor on both "
      "hosts); RoCE needs a lossless network: PFC and ECN, RoCE traffic in its own priority";
  return {std::move(f)};
}

}  // namespace rdmacheck::conn
