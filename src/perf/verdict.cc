#include "perf/verdict.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace rdmacheck::perf {

bool software_device(const std::string& driver) { return driver == "rxe" || driver == "siw"; }

double payload_efficiency(uint32_t size, int mtu, bool ethernet) {
  if (size == 0 || mtu <= 0) return 0;
  // RoCE v2 per packet: preamble+SFD 8, Ethernet 14, FCS 4, gap 12, IPv4 20,
  // UDP 8, BTH 12, ICRC 4. InfiniBand: LRH 8, BTH 12, ICRC 4, VCRC 2.
  const double per_packet = ethernet ? 8 + 14 + 4 + 12 + 20 + 8 + 12 + 4 : 8 + 12 + 4 + 2;
  const double first_extra = 16;  // RETH on the first packet of a write/read
  const uint64_t packets = (size + static_cast<uint64_t>(mtu) - 1) / static_cast<uint64_t>(mtu);
  const double wire = size + per_packet * static_cast<double>(packets) + first_extra;
  return size / wire;
}

double pcie_usable_gbps(double gt_per_s, int width) {
  const double code = gt_per_s <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gt_per_s * width * code * 0.9;
}

std::optional<Expected> expected_bw(const LinkFacts& l, uint32_t size) {
  if (software_device(l.driver) || l.port_gbps <= 0) return std::nullopt;
  Expected e{l.port_gbps, "port", 0, 0};
  if (l.netdev_gbps && *l.netdev_gbps > 0 && *l.netdev_gbps < e.line_gbps) {
    e = {*l.netdev_gbps, "netdev", 0, 0};
  }
  if (l.pcie_gbps && *l.pcie_gbps > 0 && *l.pcie_gbps < e.line_gbps) {
    e = {*l.pcie_gbps, "PCIe", 0, 0};
  }
  e.efficiency = payload_efficiency(size, l.mtu, l.ethernet);
  e.gbps = e.line_gbps * e.efficiency;
  return e;
}

std::vector<Finding> verdict_findings(const Spec& s, const LinkFacts& l,
                                      const std::vector<BwSample>& bw,
                                      const std::vector<LatSample>& lat) {
  std::vector<Finding> out;
  if (software_device(l.driver)) {
    Finding f;
    f.id = FindingId::kNoLineRateReference;
    f.severity = Severity::kInfo;
    f.layer = Layer::kPerformance;
    f.summary = fmt::format(
        "{} is a software RDMA device ({}): no hardware line rate or latency "
        "to compare against; figures are this host's CPU, not a NIC",
        l.device, l.driver);
    f.evidence.push_back(
        fmt::format("driver {}, port rate {} Gb/s (nominal)", l.driver, l.port_gbps));
    out.push_back(std::move(f));
    return out;
  }
  // Bandwidth: the largest size decides (small messages are message-rate bound).
  const BwSample* big = nullptr;
  for (const auto& b : bw) {
    if (big == nullptr || b.size > big->size) big = &b;
  }
  if (big != nullptr && big->size >= 65536) {
    if (auto e = expected_bw(l, big->size); e && big->avg_gbps < 0.7 * e->gbps) {
      Finding f;
      f.id = FindingId::kBandwidthBelowExpected;
      f.severity = big->avg_gbps < 0.5 * e->gbps ? Severity::kFail : Severity::kWarn;
      f.layer = Layer::kPerformance;
      f.summary = fmt::format(
          "{} bandwidth at {} B is {:.1f} Gb/s, {:.0f}% of the {:.1f} Gb/s "
          "this link should deliver",
          name_of(s.op), big->size, big->avg_gbps, 100 * big->avg_gbps / e->gbps, e->gbps);
      f.evidence.push_back(
          fmt::format("line rate {:.1f} Gb/s (limited by {}), payload "
                      "efficiency {:.3f} at MTU {}",
                      e->line_gbps, e->limited_by, e->efficiency, l.mtu));
      f.fix =
          "compare ethtool speed, PCIe LnkSta vs LnkCap, the CPU governor and core pinning; "
          "look for loss counters rising during the test";
      out.push_back(std::move(f));
    }
  }
  // Latency: the smallest size decides; reference upper bounds per one-way trip.
  const LatSample* small = nullptr;
  for (const auto& x : lat) {
    if (small == nullptr || x.size < small->size) small = &x;
  }
  if (small != nullptr && small->size <= 4096) {
    const double bound = (l.ethernet ? 4.0 : 2.0) * (small->half_round_trip ? 1 : 2);
    if (small->stats.median > 2 * bound) {
      Finding f;
      f.id = FindingId::kLatencyAboveExpected;
      f.severity = small->stats.median > 10 * bound ? Severity::kFail : Severity::kWarn;
      f.layer = Layer::kPerformance;
      f.summary = fmt::format(
          "{} latency at {} B is {:.2f} us (median), above the {:.0f} us a "
          "{} link in a rack delivers",
          name_of(s.op), small->size, small->stats.median, bound,
          l.ethernet ? "RoCE" : "InfiniBand");
      f.evidence.push_back(fmt::format("min {:.2f} us, p99 {:.2f} us over {} round trips",
                                       small->stats.min, small->stats.p99, small->stats.n));
      f.fix =
          "cpupower frequency-set -g performance; pin to a core on the NIC's NUMA node "
          "(--cpu); check the path (hops, congestion)";
      out.push_back(std::move(f));
    }
  }
  return out;
}

namespace {

std::string stall_causes() {
  return "three causes look like this from the ends: a link or switch port that went down and came "
         "back (a flap one hop away leaves both hosts' carrier up: look for a down/up at that time "
         "in the switch's log and counters); a peer host that stopped for a while (its dmesg, CPU "
         "and memory pressure, the serve log's timestamps); or a burst of loss long enough for "
         "several ACK timeouts in a row (then packet-loss-during-test stands beside this finding)";
}

}  // namespace

std::optional<Finding> stall_finding(const Spec& s, const std::vector<BwSample>& bw,
                                     const std::vector<LatSample>& lat) {
  const BwSample* worst = nullptr;
  for (const auto& b : bw) {
    if (b.stall.resumed && b.stall.seconds >= kStallWarnS &&
        (worst == nullptr || b.stall.seconds > worst->stall.seconds)) {
      worst = &b;
    }
  }
  // A round trip's time, in seconds (the figures are half of it for write and send).
  const auto rtt_s = [](const LatSample& l, double us) {
    return us * (l.half_round_trip ? 2 : 1) / 1e6;
  };
  const LatSample* slow = nullptr;
  for (const auto& l : lat) {
    if (rtt_s(l, l.stats.max) >= kStallWarnS &&
        (slow == nullptr || rtt_s(l, l.stats.max) > rtt_s(*slow, slow->stats.max))) {
      slow = &l;
    }
  }
  if (worst == nullptr && slow == nullptr) return std::nullopt;
  Finding f;
  f.id = FindingId::kTrafficStalled;
  f.severity = Severity::kWarn;
  f.layer = Layer::kPerformance;
  if (worst != nullptr) {
    f.summary = fmt::format(
        "traffic stopped for {:.1f} s and then resumed: no {} of {} B completed from {:.1f} s to "
        "{:.1f} s into the test",
        worst->stall.seconds, name_of(s.op), worst->size, worst->stall.from,
        worst->stall.from + worst->stall.seconds);
  } else {
    f.summary = fmt::format(
        "traffic stopped for {:.1f} s and then resumed: one {} round trip of {} B took that long, "
        "the median {:.3f} ms",
        rtt_s(*slow, slow->stats.max), name_of(s.op), slow->size,
        rtt_s(*slow, slow->stats.median) * 1e3);
  }
  for (const auto& b : bw) {
    if (b.stall.seconds >= kStallWarnS) {
      f.evidence.push_back(
          fmt::format("{} B: the longest time without a completion was {:.2f} s "
                      "(progress sampled every millisecond)",
                      b.size, b.stall.seconds));
    }
  }
  for (const auto& l : lat) {
    if (rtt_s(l, l.stats.max) >= kStallWarnS) {
      f.evidence.push_back(fmt::format("{} B: the slowest of {} round trips took {:.2f} s", l.size,
                                       l.stats.n, rtt_s(l, l.stats.max)));
    }
  }
  f.fix = stall_causes();
  return f;
}

std::optional<Finding> stall_before_failure_finding(const Spec& s, uint32_t size,
                                                    const Stall& silence, const std::string& error,
                                                    uint64_t sequence_gaps) {
  if (silence.seconds < kStallWarnS || sequence_gaps > 0) return std::nullopt;
  Finding f = make_finding(
      FindingId::kTrafficStalled, Severity::kWarn, Layer::kPerformance,
      fmt::format("traffic stopped {:.1f} s into the {} B {} and did not resume: the test "
                  "failed {:.1f} s later",
                  silence.from, size, name_of(s.op), silence.seconds));
  f.evidence.push_back(fmt::format(
      "{} B: no message completed for the last {:.2f} s before the failure (progress sampled "
      "every millisecond)",
      size, silence.seconds));
  f.evidence.push_back(error);
  // One more cause than for a stall that resumed: a server that is gone.
  f.fix = stall_causes() +
          "; or the server's process ended mid-test (rdmacheck serve's log says so, and this "
          "report then has no counters from the peer)";
  return f;
}

}  // namespace rdmacheck::perf
