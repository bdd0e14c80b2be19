// MTU: the RoCE path MTU a netdev MTU allows (RoCE v2 headers take 96 bytes
// of every frame), what the port really uses, and whether it is jumbo.
#include "doctor/mtu.h"

#include <fmt/core.h>

#include <cstdlib>

#include "doctor/check.h"
#include "findings/port_subject.h"

namespace rdmacheck::doctor {

int roce_mtu_for(int netdev_mtu) {
  // include/rdma/ib_addr.h iboe_get_mtu(): GRH 40 + UDP 8 + BTH 12 + XRC 4 +
  // AtomicETH 28 + ICRC 4 bytes come off, then round down to an IB MTU.
  const int payload = netdev_mtu - kRoceHeaderBytes;
  for (int m : {4096, 2048, 1024, 512, 256}) {
    if (payload >= m) return m;
  }
  return 0;
}

std::vector<CheckResult> check_mtu(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      CheckResult c{
          .check = "mtu", .layer = Layer::kPerformance, .subject = port_subject(d.name, p.port)};
      auto verbs = m.src.port_mtu(d.name, p.port);
      if (verbs) {
        c.fact("active_mtu_bytes", verbs->active_mtu);
        c.fact("max_mtu_bytes", verbs->max_mtu);
      } else {
        c.fact("active_mtu_error", "could not read: " + verbs.error().message());
      }
      if (!p.ethernet() || p.netdev.empty()) {
        out.push_back(std::move(c));
        continue;
      }
      const auto text = m.fs.read_line("/sys/class/net/" + p.netdev + "/mtu");
      if (!text) {
        c.fact("netdev_mtu_error", "could not read /sys/class/net/" + p.netdev + "/mtu");
        out.push_back(std::move(c));
        continue;
      }
      const int mtu = std::atoi(text->c_str());
      const int allowed = roce_mtu_for(mtu);
      c.fact("netdev_mtu_bytes", mtu);
      c.fact("roce_mtu_allowed_bytes", allowed);
      if (allowed < 4096) {
        auto& f = c.add(is_software(d) ? Severity::kInfo : Severity::kWarn, FindingId::kMtuNotJumbo,
                        fmt::format("{} MTU {} limits RoCE to {}-byte packets; 4096 needs a "
                                    "netdev MTU of at least {} (9000 is usual)",
                                    p.netdev, mtu, allowed, 4096 + kRoceHeaderBytes));
        f.evidence.push_back(
            fmt::format("/sys/class/net/{}/mtu: {}; minus {} bytes of RoCE v2 "
                        "headers leaves {}: the largest IB MTU that fits is {}",
                        p.netdev, mtu, kRoceHeaderBytes, mtu - kRoceHeaderBytes, allowed));
        if (verbs) {
          f.evidence.push_back(fmt::format("ibv_query_port: active_mtu {}, max_mtu {}",
                                           verbs->active_mtu, verbs->max_mtu));
        }
        if (is_software(d)) {
          f.evidence.push_back("Soft-RoCE: the packet size barely matters next to the CPU cost");
        }
        f.fix = fmt::format(
            "ip link set {} mtu 9000, and the same MTU on the peer and every "
            "switch port on the path (RoCE uses the smaller active MTU of the "
            "two ends)",
            p.netdev);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
