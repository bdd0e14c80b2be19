// The faults a lab guest's own configuration makes (--fault NAME[@HOST]), as
// a table: each a name, where it may land and the guest commands that make
// it. The faults in the switch are lab/switch_fault.h's.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "lab/plan.h"

namespace rdmacheck::lab {

namespace {

// Where a host fault lands: its host, the NIC (0: the host's first, or all
// of them for the firewall), that NIC's netdev in the guest, and the fault's
// argument (loss:PCT).
struct FaultSite {
  std::string fault;  // as given, for messages
  std::string host;
  int nic = 0;
  std::string dev;
  std::string arg;
};
using HostCmds = Result<std::vector<HostCmd>>;

HostCmds firewall_cmds(const FaultSite& s) {
  const std::string in = s.nic == 0 ? "" : " -i " + s.dev;
  return std::vector<HostCmd>{{s.host, "iptables -I INPUT" + in + " -p udp --dport 4791 -j DROP"}};
}

HostCmds mtu_cmds(const FaultSite& s) {
  return std::vector<HostCmd>{{s.host, fmt::format("ip link set {} mtu 9000", s.dev)}};
}

HostCmds loss_cmds(const FaultSite& s) {
  char* end = nullptr;
  const double pct = std::strtod(s.arg.c_str(), &end);
  if (s.arg.empty() || *end != '\0' || !(pct > 0 && pct <= 100)) {
    return plain_error("--fault",
                       fmt::format("'{}': loss needs a percentage, e.g. loss:1", s.fault));
  }
  return std::vector<HostCmd>{
      {s.host, fmt::format("tc qdisc add dev {} root netem loss {}%", s.dev, s.arg)}};
}

HostCmds link_down_cmds(const FaultSite& s) {
  return std::vector<HostCmd>{{s.host, fmt::format("ip link set {} down", s.dev)}};
}

// The emulated CPU has no cpufreq of its own: a tmpfs over cpu0 shows the
// kernel's view of a host left in powersave, which is what the doctor reads.
HostCmds powersave_cmds(const FaultSite& s) {
  const std::string cpu0 = "/sys/devices/system/cpu/cpu0";
  return std::vector<HostCmd>{
      {s.host, fmt::format("mount -t tmpfs powersave {0} && mkdir {0}/cpufreq && "
                           "echo powersave > {0}/cpufreq/scaling_governor",
                           cpu0)}};
}

// No command: the row's no_server says it all.
HostCmds no_server_cmds(const FaultSite& /*s*/) { return std::vector<HostCmd>{}; }

// The faults a guest's own configuration makes (the switch's are in
// lab/switch_fault.h), in the order the usage names them.
struct HostFault {
  std::string_view name;
  std::string_view usage;  // as the list of faults names it
  bool whole_host;         // concerns the host, not one NIC
  bool takes_arg;          // NAME:ARG
  bool no_server;          // the lab starts no server on the host
  HostCmds (*commands)(const FaultSite&);
};
constexpr std::array<HostFault, 6> kHostFaults = {{
    {"firewall", "firewall", false, false, false, firewall_cmds},
    {"mtu-mismatch", "mtu-mismatch", false, false, false, mtu_cmds},
    {"loss", "loss:PERCENT", false, true, false, loss_cmds},
    {"link-down", "link-down", false, false, false, link_down_cmds},
    {"powersave", "powersave", true, false, false, powersave_cmds},
    {"no-server", "no-server", true, false, true, no_server_cmds},
}};

std::string host_fault_choices() {
  std::string s;
  for (size_t i = 0; i < kHostFaults.size(); ++i) {
    s += i == 0 ? "" : i + 1 == kHostFaults.size() ? " or " : ", ";
    s += kHostFaults[i].usage;
  }
  return s;
}

}  // namespace

Result<std::vector<HostCmd>> fault_commands(const std::string& fault, int hosts, int nics,
                                            bool* no_server) {
  FaultSite site{fault, "h1"};  // faults land on the server by default
  std::string name = fault;
  if (auto at = fault.find('@'); at != std::string::npos) {
    name = fault.substr(0, at);
    auto t = parse_nic_target(fault.substr(at + 1), hosts, nics);
    if (!t) return t.error();
    site.host = t->host;
    site.nic = t->nic;
  }
  if (auto colon = name.find(':'); colon != std::string::npos) {
    site.arg = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  site.dev = fmt::format("eth{}", site.nic == 0 ? 0 : site.nic - 1);
  const auto* f = std::find_if(kHostFaults.begin(), kHostFaults.end(),
                               [&](const HostFault& h) { return h.name == name; });
  if (f != kHostFaults.end() && f->whole_host && site.nic != 0) {
    return plain_error("--fault", fmt::format("'{}': {} concerns the whole host, not one NIC: "
                                              "name the host alone, e.g. @{}",
                                              fault, name, site.host));
  }
  if (f == kHostFaults.end() || (!f->takes_arg && !site.arg.empty())) {
    return plain_error("--fault", fmt::format("unknown fault '{}': choose {}, optionally @HOST or "
                                              "@HOST-NIC (e.g. @h2-2), or a fault in the switch "
                                              "(switch-loss:PCT@HOST, ...)",
                                              fault, host_fault_choices()));
  }
  if (f->no_server) *no_server = true;
  return f->commands(site);
}

}  // namespace rdmacheck::lab
