// Lossless Ethernet for RoCE: PFC per priority and trust mode (DCB netlink),
// ECN/DCQCN per priority (MLNX_OFED mlx5: /sys/class/net/DEV/ecn/roce_{np,rp}/
// enable/N). RoCE retransmits go-back-N, so drops under congestion collapse
// throughput; where a driver exposes neither, say so instead of guessing.
#include <fmt/format.h>

#include <algorithm>

#include "doctor/check.h"

namespace rdmacheck::doctor {
namespace {

struct Ecn {
  bool readable = false;
  std::vector<int> np;  // priorities where this host marks CNPs (notification point)
  std::vector<int> rp;  // priorities where it slows down on CNPs (reaction point)
};

Ecn read_ecn(const FsRoot& fs, const std::string& netdev) {
  Ecn e;
  for (const char* role : {"roce_np", "roce_rp"}) {
    for (int prio = 0; prio < 8; ++prio) {
      auto v = fs.read_line(fmt::format("/sys/class/net/{}/ecn/{}/enable/{}", netdev, role, prio));
      if (!v) continue;
      e.readable = true;
      if (*v == "1") (std::string(role) == "roce_np" ? e.np : e.rp).push_back(prio);
    }
  }
  return e;
}

}  // namespace

std::vector<CheckResult> check_lossless(const Machine& m) {
  std::vector<CheckResult> out;
  std::vector<std::string> seen;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      if (!p.ethernet() || p.netdev.empty()) continue;
      if (std::find(seen.begin(), seen.end(), p.netdev) != seen.end()) continue;
      seen.push_back(p.netdev);
      CheckResult c{.check = "lossless", .layer = Layer::kPerformance, .subject = p.netdev};
      const auto dcb = m.src.dcb(p.netdev);
      const Ecn ecn = read_ecn(m.fs, p.netdev);
      const bool pfc_known = dcb && dcb->pfc_present;
      if (pfc_known) {
        c.fact("pfc_priorities", dcb->pfc_priorities());
        c.fact("pfc_capable_tcs", dcb->pfc_cap);
        c.fact("trust", dcb->trust());
        if (!dcb->dscp_priority.empty())
          c.fact("dscp_to_priority", dscp_map_json(dcb->dscp_priority));
        nlohmann::json sent = nlohmann::json::object();
        nlohmann::json received = nlohmann::json::object();
        for (int i = 0; i < 8; ++i) {
          if (dcb->pfc_requests[i] != 0) sent[std::to_string(i)] = dcb->pfc_requests[i];
          if (dcb->pfc_indications[i] != 0) received[std::to_string(i)] = dcb->pfc_indications[i];
        }
        c.fact("pfc_pause_sent", sent);
        c.fact("pfc_pause_received", received);
      } else {
        c.fact("pfc", dcb ? "DCB reply without PFC" : "not readable: " + dcb.error().message());
      }
      if (ecn.readable) {
        c.fact("ecn_np_priorities", ecn.np);
        c.fact("ecn_rp_priorities", ecn.rp);
      } else {
        c.fact("ecn", "not readable (no /sys/class/net/" + p.netdev +
                          "/ecn: not an MLNX_OFED "
                          "mlx5 driver)");
      }
      const bool pfc_on = pfc_known && dcb->pfc_enabled != 0;
      const bool ecn_on = ecn.readable && (!ecn.np.empty() || !ecn.rp.empty());
      if (!pfc_known && !ecn.readable) {
        auto& f = c.add(Severity::kInfo, FindingId::kLosslessNotReadable,
                        fmt::format("PFC and ECN of {} are not readable on this driver{}", p.netdev,
                                    is_software(d) ? " (a software device has neither)" : ""));
        f.evidence.push_back("DCB netlink (DCB_CMD_IEEE_GET): " +
                             (dcb ? std::string("no PFC in the reply") : dcb.error().message()));
        f.evidence.push_back("/sys/class/net/" + p.netdev + "/ecn/roce_np/enable/*: absent");
      } else if (!pfc_on && ecn.readable && !ecn_on) {
        auto& f = c.add(Severity::kWarn, FindingId::kLosslessNotConfigured,
                        p.netdev +
                            " has neither PFC nor ECN on any priority: under congestion "
                            "RoCE drops packets and go-back-N retransmission collapses "
                            "throughput");
        f.evidence.push_back(pfc_known ? "PFC enabled on no priority (DCB_CMD_IEEE_GET pfc_en 0)"
                                       : "PFC not readable");
        f.evidence.push_back("ECN roce_np and roce_rp disabled on priorities 0-7");
        f.fix = "enable PFC on the RoCE priority (mlnx_qos -i " + p.netdev +
                " --pfc 0,0,0,1,0,0,0,0 or dcb pfc set dev " + p.netdev +
                " prio-pfc 3:on) and ECN (echo 1 > /sys/class/net/" + p.netdev +
                "/ecn/roce_np/enable/3 and roce_rp/enable/3); the switch must match";
      } else if (!pfc_on && !ecn.readable) {
        auto& f = c.add(Severity::kInfo, FindingId::kPfcNotEnabled,
                        p.netdev +
                            " has PFC off on every priority; ECN/DCQCN state is not "
                            "readable here (upstream mlx5 keeps DCQCN in firmware, on by "
                            "default)");
        f.evidence.push_back("DCB_CMD_IEEE_GET: pfc_en 0");
        f.fix =
            "fine for lossy RoCE with ECN on the switches; for lossless RoCE enable PFC on the "
            "RoCE priority: dcb pfc set dev " +
            p.netdev + " prio-pfc 3:on";
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
