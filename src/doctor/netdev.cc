// The netdev behind each RoCE port: that it exists and is up, and that its
// link runs at the speed the NIC, the cable and the switch could do.
#include <fmt/format.h>

#include <cmath>

#include "doctor/check.h"
#include "findings/port_subject.h"

namespace rdmacheck::doctor {
namespace {

std::string gbps(uint32_t mbps) {
  return mbps % 1000 == 0 ? fmt::format("{} Gb/s", mbps / 1000)
                          : fmt::format("{:.1f} Gb/s", mbps / 1000.0);
}

void check_speed(CheckResult& c, const DeviceInfo& d, const PortInfo& p, const LinkSettings& l) {
  // Gb/s as numbers; null when the link reports none.
  auto in_gbps = [](uint32_t mbps) { return nlohmann::json(mbps / 1000.0); };
  c.fact("speed_gbps", l.speed_mbps ? in_gbps(*l.speed_mbps) : nlohmann::json());
  c.fact("duplex", l.duplex);
  c.fact("autoneg", l.autoneg);
  c.fact("fastest_supported_gbps",
         l.supported.empty() ? nlohmann::json() : in_gbps(fastest_mbps(l.supported)));
  if (!l.speed_mbps) {
    auto& f = c.add(Severity::kInfo, FindingId::kLinkSpeedUnknown,
                    p.netdev + " reports no link speed" +
                        (is_software(d) ? " (a virtual NIC under a software RDMA device)" : ""));
    f.evidence.push_back("ETHTOOL_GLINKSETTINGS: speed unknown, duplex " + l.duplex);
    return;
  }
  const uint32_t speed = *l.speed_mbps;
  if (l.duplex == "half") {
    auto& f = c.add(Severity::kWarn, FindingId::kLinkHalfDuplex,
                    p.netdev + " runs half duplex: RoCE needs a full-duplex link");
    f.evidence.push_back(fmt::format("{} {}, duplex half", p.netdev, gbps(speed)));
    f.fix = "check autonegotiation on both ends (ethtool -s " + p.netdev + " autoneg on)";
  }
  const uint32_t best = fastest_mbps(l.supported);
  if (best > speed) {
    auto& f = c.add(
        Severity::kWarn, FindingId::kLinkSpeedBelowCapability,
        fmt::format("{} negotiated {} but the NIC supports {}", p.netdev, gbps(speed), gbps(best)));
    f.evidence.push_back(
        fmt::format("ETHTOOL_GLINKSETTINGS {}: speed {} Mb/s, duplex {}, "
                    "autoneg {}",
                    p.netdev, speed, l.duplex, l.autoneg ? "on" : "off"));
    f.evidence.push_back("supported: " + fmt::format("{}", fmt::join(l.supported, " ")));
    const uint32_t adv = fastest_mbps(l.advertised);
    const uint32_t partner = fastest_mbps(l.partner);
    if (!l.advertised.empty() && adv < best) {
      f.evidence.push_back(
          fmt::format("this end advertises at most {}: it was told not to "
                      "offer more",
                      gbps(adv)));
    }
    if (!l.partner.empty()) {
      f.evidence.push_back(fmt::format("link partner advertises: {} (at most {})",
                                       fmt::join(l.partner, " "), gbps(partner)));
    }
    if (!l.partner.empty() && partner <= speed) {
      f.fix = fmt::format(
          "the switch port offers only {}: configure it for {} (and use a cable/"
          "optic rated for it)",
          gbps(partner), gbps(best));
    } else {
      f.fix = fmt::format(
          "use a cable/optic rated for {}, check the switch port, then "
          "ethtool -s {} autoneg on (or speed {} for a forced link)",
          gbps(best), p.netdev, best);
    }
  }
  if (!is_software(d) && p.rate_gbps > 0 && std::fabs(p.rate_gbps * 1000 - speed) > 0.05 * speed) {
    auto& f = c.add(Severity::kInfo, FindingId::kPortRateDiffersFromLink,
                    fmt::format("{} port {} rate {} differs from {}'s link speed {}", d.name,
                                p.port, p.rate, p.netdev, gbps(speed)));
    f.evidence.push_back(
        "the RDMA port rate is derived from the Ethernet link; a difference "
        "means a bond, a VF, or a driver that has not caught up");
  }
}

}  // namespace

std::vector<CheckResult> check_netdevs(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      if (!p.ethernet()) continue;
      CheckResult c{
          .check = "netdev", .layer = Layer::kDevice, .subject = port_subject(d.name, p.port)};
      if (p.netdev.empty()) {
        auto& f = c.add(Severity::kFail, FindingId::kRdmaNetdevMissing,
                        fmt::format("{} port {} is RoCE but no netdev maps to it", d.name, p.port));
        f.evidence.push_back("no gid_attrs/ndevs entry and no net/ directory under the device");
        f.fix = "load the NIC's Ethernet driver; for Soft-RoCE recreate the link: rdma link add " +
                d.name + " type rxe netdev DEV";
        out.push_back(std::move(c));
        continue;
      }
      const std::string nd = "/sys/class/net/" + p.netdev;
      c.fact("netdev", p.netdev);
      const std::string oper = m.fs.read_line(nd + "/operstate").value_or("?");
      c.fact("operstate", oper);
      if (auto drv = m.fs.link_target(nd + "/device/driver")) c.fact("driver", *drv);
      if (oper != "up" && p.active()) {
        auto& f = c.add(Severity::kWarn, FindingId::kNetdevNotUp,
                        fmt::format("{} is '{}' although {} port {} is ACTIVE", p.netdev, oper,
                                    d.name, p.port));
        f.evidence.push_back(nd + "/operstate: " + oper);
        f.fix = "ip link set " + p.netdev + " up";
      }
      auto link = m.src.link_settings(p.netdev);
      if (link) {
        check_speed(c, d, p, *link);
      } else {
        c.fact("speed_error", "could not read: " + link.error().message());
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
