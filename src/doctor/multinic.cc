// On a host with two or more RDMA NICs: which netdev routes to which subnet
// (and under which policy rules), the RoCE v2 GID of each of its addresses,
// and a subnet configured on two NICs. Such a duplicate makes routes
// asymmetric (replies leave by the first NIC of the subnet whichever NIC the
// request came in on) and lets the wrong NIC answer ARP, unless arp_ignore,
// arp_announce and a policy rule per NIC say otherwise.
#include "doctor/multinic.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "doctor/check.h"

namespace rdmacheck::doctor {
namespace {

struct Nic {
  std::string netdev;
  std::string port;  // "rxe0/1"
  const PortInfo* info = nullptr;
};

// The RDMA ports with a netdev, one per netdev, in device order.
std::vector<Nic> rdma_nics(const std::vector<DeviceInfo>& devices) {
  std::vector<Nic> out;
  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      if (p.netdev.empty()) continue;
      if (std::any_of(out.begin(), out.end(), [&](const Nic& n) { return n.netdev == p.netdev; }))
        continue;
      out.push_back({p.netdev, fmt::format("{}/{}", d.name, p.port), &p});
    }
  }
  return out;
}

// What the judging of a duplicate subnet found, NIC by NIC.
struct Verdict {
  std::vector<std::string> evidence;
  std::vector<std::string> problems;
  std::vector<std::string> fixes;
  void problem(std::string what, std::string fix) {
    problems.push_back(std::move(what));
    fixes.push_back(std::move(fix));
  }
};

// arp_ignore and arp_announce of one NIC (the larger of all and the NIC's).
void judge_arp(const FsRoot& fs, const NetAddress& a, Verdict& v) {
  const auto ignore = effective_arp_sysctl(fs, a.netdev, "arp_ignore");
  const auto announce = effective_arp_sysctl(fs, a.netdev, "arp_announce");
  v.evidence.push_back(
      fmt::format("net.ipv4.conf.{}: arp_ignore {}, arp_announce {} (the larger of all and {})",
                  a.netdev, ignore ? std::to_string(*ignore) : "?",
                  announce ? std::to_string(*announce) : "?", a.netdev));
  if (ignore && *ignore == 0) {
    v.problem(fmt::format("{} answers ARP for addresses of the other NIC (arp_ignore 0)", a.netdev),
              fmt::format("sysctl -w net.ipv4.conf.{}.arp_ignore=1", a.netdev));
  }
  if (announce && *announce < 2) {
    v.problem(fmt::format("{} may send ARP requests with another NIC's address (arp_announce {})",
                          a.netdev, *announce),
              fmt::format("sysctl -w net.ipv4.conf.{}.arp_announce=2", a.netdev));
  }
}

// The policy rule that sends traffic from the NIC's address out of it, and
// its table's route via the NIC. TABLE is the one a fix would create.
void judge_policy(const NetAddress& a, const std::string& subnet, int table,
                  const std::vector<PolicyRule>& rules, const std::vector<Route>& routes,
                  Verdict& v) {
  const auto rule = std::find_if(rules.begin(), rules.end(), [&](const PolicyRule& r) {
    return rule_selects_source(r, a.address);
  });
  if (rule == rules.end()) {
    v.problem(fmt::format("no policy rule sends traffic from {} out of {}", a.address, a.netdev),
              fmt::format("ip rule add from {} table {}; ip route add {} dev {} src {} table {}",
                          a.address, table, subnet, a.netdev, a.address, table));
    return;
  }
  const bool via_nic = std::any_of(routes.begin(), routes.end(), [&](const Route& r) {
    return r.table == rule->table && r.dev == a.netdev;
  });
  v.evidence.push_back(fmt::format(
      "ip rule: from {} lookup {} (priority {}){}", a.address, rule->table, rule->priority,
      via_nic ? fmt::format(", which routes via {}", a.netdev)
              : fmt::format(", but table {} has no route via {}", rule->table, a.netdev)));
  if (!via_nic) {
    v.problem(
        fmt::format("table {} (for {}) has no route via {}", rule->table, a.address, a.netdev),
        fmt::format("ip route add {} dev {} src {} table {}", subnet, a.netdev, a.address,
                    rule->table));
  }
}

// "eth1, eth2 and eth3": each netdev once, in order.
std::string netdev_names(const std::vector<const NetAddress*>& on) {
  std::vector<std::string> devs;
  for (const NetAddress* a : on) {
    if (std::find(devs.begin(), devs.end(), a->netdev) == devs.end()) devs.push_back(a->netdev);
  }
  std::string names;
  for (size_t i = 0; i < devs.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == devs.size() ? " and " : ", ") + devs[i];
  }
  return names;
}

// The subnet on two NICs: sysctls and policy rules, judged per NIC.
void judge_duplicate(CheckResult& c, const std::string& subnet,
                     const std::vector<const NetAddress*>& on, const std::vector<Nic>& nics,
                     const FsRoot& fs, const std::vector<PolicyRule>& rules,
                     const std::vector<Route>& routes, bool have_rules) {
  Verdict v;
  auto port_of = [&](const std::string& netdev) {
    for (const auto& n : nics) {
      if (n.netdev == netdev) return n.port;
    }
    return std::string("no RDMA device");
  };
  v.evidence.reserve(on.size() * 3);
  for (const NetAddress* a : on) {
    v.evidence.push_back(
        fmt::format("{}: {}/{} ({})", a->netdev, a->address, a->prefix_len, port_of(a->netdev)));
  }
  const bool v4 = on.front()->family == 4;
  const std::string names = netdev_names(on);
  const char* no_rules = "ip -j rule show: not available, policy rules not checked";
  if (!v4) {
    if (!have_rules) v.evidence.push_back(no_rules);
    auto& f = c.add(Severity::kWarn, FindingId::kDuplicateSubnet,
                    fmt::format("{} is configured on {}: replies may leave by the other NIC "
                                "than the request came in on",
                                subnet, names));
    f.evidence = v.evidence;
    f.fix =
        "give each NIC its own subnet, or a policy rule per NIC (ip -6 rule add from ADDR "
        "table N; ip -6 route add SUBNET dev NIC table N)";
    return;
  }
  int table = 100;
  for (const NetAddress* a : on) {
    judge_arp(fs, *a, v);
    if (have_rules) judge_policy(*a, subnet, ++table, rules, routes, v);
  }
  if (!have_rules) v.evidence.push_back(no_rules);
  if (v.problems.empty()) {
    auto& f = c.add(Severity::kInfo, FindingId::kDuplicateSubnet,
                    fmt::format("{} is configured on {}; arp_ignore, arp_announce and a policy "
                                "rule per NIC keep each address on its own NIC",
                                subnet, names));
    f.evidence = v.evidence;
    return;
  }
  auto& f = c.add(Severity::kWarn, FindingId::kDuplicateSubnet,
                  fmt::format("{} is configured on {}: {}. RoCE from one NIC's address can "
                              "then leave by, or be answered on, the other (asymmetric routes, "
                              "ARP flux)",
                              subnet, names, v.problems.front()));
  f.evidence = v.evidence;
  for (size_t i = 1; i < v.problems.size(); ++i) f.evidence.push_back("also: " + v.problems[i]);
  std::string fix;
  for (const auto& x : v.fixes) fix += (fix.empty() ? "" : "; ") + x;
  f.fix = fix + " (or give each NIC its own subnet)";
}

}  // namespace

std::optional<int> effective_arp_sysctl(const FsRoot& fs, const std::string& dev,
                                        const std::string& name) {
  std::optional<int> out;
  for (const auto& scope : {std::string("all"), dev}) {
    const auto v = fs.read_line(fmt::format("/proc/sys/net/ipv4/conf/{}/{}", scope, name));
    if (!v) continue;
    const int n = std::atoi(v->c_str());
    out = out ? std::max(*out, n) : n;
  }
  return out;
}

std::vector<CheckResult> check_multi_nic(const Machine& m) {
  const auto nics = rdma_nics(m.devices);
  if (nics.size() < 2) return {};  // one NIC: nothing to choose between
  std::vector<CheckResult> out;
  const auto addrs = m.src.addresses();
  const auto runs = m.src.routing();
  const ToolRun* rule_run = successful_run(runs, kIpRules);
  const auto rules = rule_run ? parse_ip_rules(rule_run->out) : std::vector<PolicyRule>{};
  std::vector<Route> routes;
  if (const ToolRun* r = successful_run(runs, kIpRoutes)) routes = parse_ip_routes(r->out);
  // Per NIC: its device, the subnets it routes to, the GID of each address.
  for (const auto& n : nics) {
    CheckResult c{"multi-nic", Layer::kDevice, n.netdev, {}, {}};
    c.fact("device", n.port);
    nlohmann::json reach = nlohmann::json::array();
    for (const auto& r : routes) {
      if (r.dev != n.netdev || r.type != "unicast" || r.dst.empty()) continue;
      reach.push_back(r.table == "main" ? r.dst : r.dst + " (table " + r.table + ")");
    }
    c.fact("routes", reach);
    nlohmann::json gids = nlohmann::json::array();
    for (const auto& a : addrs ? *addrs : std::vector<NetAddress>{}) {
      if (a.netdev != n.netdev) continue;
      auto g = std::find_if(n.info->gids.begin(), n.info->gids.end(), [&](const GidEntry& e) {
        return e.type == GidType::kRoceV2 && e.address == a.address;
      });
      gids.push_back({{"address", fmt::format("{}/{}", a.address, a.prefix_len)},
                      {"gid_index", g == n.info->gids.end() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(g->index)}});
    }
    c.fact("roce_v2_gids", gids);
    out.push_back(std::move(c));
  }
  if (!addrs) return out;
  // The same subnet on two netdevs, one of them an RDMA NIC's.
  std::map<std::string, std::vector<const NetAddress*>> by_subnet;
  for (const auto& a : *addrs) {
    if (a.link_local() || a.netdev == "lo") continue;
    by_subnet[subnet_of(a)].push_back(&a);
  }
  CheckResult host{"multi-nic", Layer::kDevice, "host", {}, {}};
  for (const auto& [subnet, on] : by_subnet) {
    std::vector<std::string> devs;
    for (const auto* a : on) {
      if (std::find(devs.begin(), devs.end(), a->netdev) == devs.end()) devs.push_back(a->netdev);
    }
    const bool rdma = std::any_of(on.begin(), on.end(), [&](const NetAddress* a) {
      return std::any_of(nics.begin(), nics.end(),
                         [&](const Nic& n) { return n.netdev == a->netdev; });
    });
    if (devs.size() < 2 || !rdma) continue;
    judge_duplicate(host, subnet, on, nics, m.fs, rules, routes, rule_run != nullptr);
  }
  host.fact("duplicate_subnets", static_cast<int>(host.findings.size()));
  out.push_back(std::move(host));
  return out;
}

}  // namespace rdmacheck::doctor
