// What the link should deliver and whether it did: expected bandwidth =
// min(port rate, netdev speed, usable PCIe) x payload efficiency at the path
// MTU; latency against the reference ranges (RoCE 2-4 us, InfiniBand 1-2 us
// for small messages in a rack). Software devices (rxe, siw) have no line
// rate to compare against and say so. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "perf/engine.h"
#include "perf/spec.h"

namespace rdmacheck::perf {

struct LinkFacts {
  std::string device;
  std::string driver;                 // "rxe", "siw", "mlx5_core", ...
  bool ethernet = true;               // RoCE; false for InfiniBand
  double port_gbps = 0;               // ibv_query_port rate
  std::optional<double> netdev_gbps;  // /sys/class/net/<netdev>/speed
  std::optional<double> pcie_gbps;    // usable, from current_link_speed/width
  int mtu = 1024;                     // path MTU in bytes
};

bool software_device(const std::string& driver);

// Payload bytes over wire bytes for SIZE-byte messages at MTU (headers of
// every packet; Ethernet preamble, gap and FCS included on RoCE v2).
double payload_efficiency(uint32_t size, int mtu, bool ethernet);
// PCIe transfer rate usable for payload: GT/s x lanes x line code x ~0.9 for
// TLP headers at 256-byte payloads. "8.0 GT/s PCIe" -> 8.
double pcie_usable_gbps(double gt_per_s, int width);

struct Expected {
  double line_gbps = 0;    // the narrowest of port, netdev, PCIe
  std::string limited_by;  // "port", "netdev", "PCIe"
  double efficiency = 0;
  double gbps = 0;  // what a healthy link delivers at this size
};
std::optional<Expected> expected_bw(const LinkFacts& l, uint32_t size);

// bandwidth-below-expected, latency-above-expected, or the honest info that a
// software device has no line rate to compare against.
std::vector<Finding> verdict_findings(const Spec& s, const LinkFacts& l,
                                      const std::vector<BwSample>& bw,
                                      const std::vector<LatSample>& lat);

// A bandwidth run in which no message completed for kStallWarnS or more and
// then traffic resumed, or a latency test one of whose round trips took that
// long: traffic-stalled, with when and how long. Well above one RC ACK
// timeout (rxe's floor is 1.07 s), so steady loss rarely reaches it; where
// it does, packet-loss-during-test stands beside it.
constexpr double kStallWarnS = 3.0;
std::optional<Finding> stall_finding(const Spec& s, const std::vector<BwSample>& bw,
                                     const std::vector<LatSample>& lat);

// A test that failed (ERROR: its error) after no message of SIZE had
// completed for kStallWarnS or more: traffic-stalled too, with when it
// stopped; the failure is what the stall cost (RC's retries ran out before
// the path or the peer came back). Shorter silences: none, the error says it.
// Nor where the ports counted SEQUENCE_GAPS: packets after a gap arrived, so
// traffic flowed and was lost or reordered (packet-loss-during-test says so):
// no outage.
std::optional<Finding> stall_before_failure_finding(const Spec& s, uint32_t size,
                                                    const Stall& silence, const std::string& error,
                                                    uint64_t sequence_gaps);

}  // namespace rdmacheck::perf
