// Port state (the logical state the subnet manager or the RoCE stack set) and
// physical state (the link itself), each non-ACTIVE combination explained.
#include <fmt/core.h>

#include "doctor/check.h"
#include "findings/port_subject.h"

namespace rdmacheck::doctor {
namespace {

// What a physical state means and what to do about it (IBTA PortPhysicalState).
std::pair<std::string, std::string> explain_phys(int phys, LinkLayer link_layer) {
  const bool eth = link_layer == LinkLayer::kEthernet;
  switch (phys) {
    case 1:
      return {"Sleep: the port is powered down", "check the port is enabled and the NIC firmware"};
    case 2:
      return {
          "Polling: no link partner answers (cable unplugged, switch port down, or the two "
          "ends disagree on speed/FEC)",
          eth ? "check the cable/optic and the switch port; ethtool DEV shows what was "
                "negotiated"
              : "check the cable and the switch port (ibstat shows the link)"};
    case 3:
      return {"Disabled: the port is administratively disabled",
              eth ? "ip link set DEV up" : "enable the port (ibportstate LID PORT enable)"};
    case 4:
      return {"PortConfigurationTraining: link training is in progress (or stuck)",
              "wait a few seconds; if it stays, reseat the cable/optic"};
    case 6:
      return {"LinkErrorRecovery: the link is retraining after errors",
              "look at symbol errors and the cable"};
    case 7:
      return {"PhyTest: the port is in a physical test mode", "take it out of test mode"};
    default:
      return {"", ""};
  }
}

void explain_state(CheckResult& c, const std::string& dev, const PortInfo& p) {
  const auto [phys_text, phys_fix] = explain_phys(p.phys_state, p.link_layer);
  const bool eth = p.ethernet();
  const std::string where = fmt::format("{} port {}", dev, p.port);
  const std::string seen = fmt::format(
      "state {}: {}, phys_state {}: {} "
      "(/sys/class/infiniband/{}/ports/{}/state, phys_state)",
      p.state, p.state_name, p.phys_state, p.phys_state_name, dev, p.port);
  switch (p.state) {
    case 1: {
      auto& f = c.add(Severity::kFail, FindingId::kPortDown,
                      where + " is DOWN: nothing can be sent or received on it");
      f.evidence.push_back(seen);
      if (!phys_text.empty()) f.evidence.push_back(phys_text);
      if (eth && !p.netdev.empty()) {
        f.evidence.push_back("RoCE port state follows its netdev " + p.netdev +
                             " (link down or administratively down)");
      }
      f.fix = phys_fix.empty() ? (eth ? "ip link set " + p.netdev + " up; check the cable"
                                      : "check the cable and the switch port")
                               : phys_fix;
      if (eth && !p.netdev.empty()) {
        const auto pos = f.fix.find("DEV");
        if (pos != std::string::npos) f.fix.replace(pos, 3, p.netdev);
      }
      return;
    }
    case 2:
    case 3: {
      const bool init = p.port_state() == PortState::kInit;
      auto& f = c.add(Severity::kFail, FindingId::kPortNotActive,
                      fmt::format("{} is {}: the link is up but the port is not {}", where,
                                  p.state_name, init ? "configured" : "activated"));
      f.evidence.push_back(seen);
      if (eth) {
        f.evidence.push_back("a RoCE port should go ACTIVE as soon as its netdev has carrier");
        f.fix = "ip link set " + (p.netdev.empty() ? std::string("DEV") : p.netdev) +
                " down && ip link set " + (p.netdev.empty() ? std::string("DEV") : p.netdev) +
                " up; reload the driver if it stays";
      } else if (init) {
        f.evidence.push_back(
            "INIT on InfiniBand: no subnet manager has assigned a LID and "
            "activated the port");
        f.fix =
            "run a subnet manager on the fabric (systemctl start opensm, or enable the "
            "switch's SM)";
      } else {
        f.evidence.push_back(
            "ARMED: the subnet manager configured the port but has not "
            "activated it yet (or its last sweep failed)");
        f.fix = "check the subnet manager's log; re-sweep (opensm) or restart it";
      }
      return;
    }
    case 4:
    case 5:
      return;
    default: {
      auto& f = c.add(Severity::kWarn, FindingId::kPortStateUnknown,
                      fmt::format("{} reports an unexpected state '{}'", where, p.state_name));
      f.evidence.push_back(seen);
    }
  }
}

}  // namespace

std::vector<CheckResult> check_ports(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      CheckResult c{
          .check = "port-state", .layer = Layer::kDevice, .subject = port_subject(d.name, p.port)};
      c.fact("state", p.state_name);
      c.fact("phys_state", p.phys_state_name);
      c.fact("link_layer", std::string(name_of(p.link_layer)));
      c.fact("rate_gbps", p.rate_gbps);
      explain_state(c, d.name, p);
      if (p.active() && p.phys_state != 5 && p.phys_state != 0) {
        auto& f = c.add(Severity::kWarn, FindingId::kPortPhysNotLinkup,
                        fmt::format("{} port {} is ACTIVE but its physical state is {}", d.name,
                                    p.port, p.phys_state_name));
        f.evidence.push_back(fmt::format("phys_state {}: {}", p.phys_state, p.phys_state_name));
      }
      if (p.link_layer == LinkLayer::kInfiniBand) {
        const auto sm =
            m.fs.read_line(fmt::format("/sys/class/infiniband/{}/ports/{}/sm_lid", d.name, p.port));
        if (sm) c.fact("sm_lid", *sm);
      }
      if (is_software(d) && p.active()) {
        auto& f = c.add(Severity::kInfo, FindingId::kSoftwareRdmaDevice,
                        fmt::format("{} is Soft-RoCE/soft-iWARP on {}: a software device, "
                                    "not a NIC",
                                    d.name, p.netdev.empty() ? "?" : p.netdev));
        f.evidence.push_back(
            fmt::format("rate {} is the nominal rate software devices report, "
                        "not a measured or negotiated one",
                        p.rate));
        f.evidence.push_back(
            "the CPU does the transport: expect far less bandwidth and more "
            "latency than a hardware RNIC");
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
