// The GID table of each RoCE port against the netdev's IP addresses: every
// address should have a RoCE v2 GID (routable, UDP 4791), and a peer in a
// given subnet should be reached with the GID index of that subnet's address.
#include <fmt/core.h>

#include <algorithm>

#include "doctor/check.h"
#include "findings/port_subject.h"

namespace rdmacheck::doctor {
namespace {

const GidEntry* v2_gid_for(const PortInfo& p, const std::string& address) {
  for (const auto& g : p.gids) {
    if (g.type == GidType::kRoceV2 && g.address == address) return &g;
  }
  return nullptr;
}

std::string gid_line(const GidEntry& g) {
  return fmt::format("GID[{}] {} {} {} {}", g.index, g.gid, gid_type_name(g.type),
                     g.address.empty() ? "-" : g.address, g.netdev.empty() ? "-" : g.netdev);
}

// A port whose GID index 0 is not routable RoCE v2: perftest's default -x 0
// reaches no peer in another subnet; name the index for each of them.
void check_index0(CheckResult& c, const std::string& where, const PortInfo& p,
                  const nlohmann::json& use) {
  const GidEntry& first = p.gids.front();
  if (first.index == 0 && (first.type != GidType::kRoceV2 || first.link_local())) {
    auto& f = c.add(
        Severity::kInfo, FindingId::kGidIndex0NotRoutable,
        fmt::format("GID index 0 of {} is {}{}: tools that default to -x 0 (perftest) "
                    "will not reach peers in other subnets",
                    where, gid_type_name(first.type), first.link_local() ? " link-local" : ""));
    f.evidence.push_back(gid_line(first));
    std::string pick;
    for (const auto& [subnet, idx] : use.items()) {
      pick +=
          fmt::format("{}-x {} for peers in {}", pick.empty() ? "" : ", ", idx.get<int>(), subnet);
    }
    f.fix = "pass the GID index explicitly: " + pick;
  }
}

void check_port(CheckResult& c, const std::string& dev, const PortInfo& p,
                const Result<std::vector<NetAddress>>& addrs) {
  const std::string where = fmt::format("{} port {}", dev, p.port);
  nlohmann::json table = nlohmann::json::array();
  for (const auto& g : p.gids) table.push_back(gid_line(g));
  c.fact("gids", table);
  const bool any_v2 = std::any_of(p.gids.begin(), p.gids.end(),
                                  [](const GidEntry& g) { return g.type == GidType::kRoceV2; });
  const bool any_v1 = std::any_of(p.gids.begin(), p.gids.end(),
                                  [](const GidEntry& g) { return g.type == GidType::kRoceV1; });
  if (p.gids.empty()) {
    auto& f = c.add(Severity::kFail, FindingId::kGidTableEmpty,
                    where + " has no GID: the netdev has no address the RDMA stack could use");
    f.evidence.push_back(
        fmt::format("/sys/class/infiniband/{}/ports/{}/gids/* are all zero", dev, p.port));
    f.fix = "give " + (p.netdev.empty() ? std::string("the netdev") : p.netdev) +
            " an IP address and bring it up (ip addr add ADDR/PREFIX dev DEV; ip link set DEV up)";
    return;
  }
  if (any_v1 && !any_v2) {
    auto& f = c.add(Severity::kWarn, FindingId::kGidRoceV1Only,
                    where +
                        " has only RoCE v1 GIDs: raw Ethernet frames, not routable beyond "
                        "the L2 domain, and most tools default to RoCE v2");
    for (const auto& g : p.gids) f.evidence.push_back(gid_line(g));
    f.fix =
        "enable RoCE v2 (mlx4: options mlx4_core roce_mode=2; others: NIC firmware); make "
        "RoCE v2 the RDMA-CM default: cma_roce_mode -d " +
        dev + " -p " + std::to_string(p.port) + " -m 2";
  }
  if (!addrs) {
    c.fact("addresses", "could not read: " + addrs.error().message());
    return;
  }
  std::vector<NetAddress> mine;
  for (const auto& a : *addrs) {
    if (a.netdev == p.netdev) mine.push_back(a);
  }
  nlohmann::json addr_list = nlohmann::json::array();
  for (const auto& a : mine) addr_list.push_back(a.address + "/" + std::to_string(a.prefix_len));
  c.fact("netdev_addresses", addr_list);
  nlohmann::json use = nlohmann::json::object();
  bool routable = false;
  for (const auto& a : mine) {
    const GidEntry* g = v2_gid_for(p, a.address);
    if (g != nullptr) {
      if (!a.link_local()) {
        routable = true;
        use[subnet_of(a)] = g->index;
      }
      continue;
    }
    if (!any_v2) continue;  // already reported as v1-only
    auto& f = c.add(Severity::kWarn, FindingId::kGidMissingForAddress,
                    fmt::format("{} on {} has no RoCE v2 GID on {}: peers cannot reach this "
                                "address over RoCE v2",
                                a.address, p.netdev, where));
    f.evidence.push_back(fmt::format("{} has {}/{}; no RoCE v2 entry in the GID table carries it",
                                     p.netdev, a.address, a.prefix_len));
    f.fix =
        "the GID table follows the netdev's addresses: re-add the address (ip addr del/add) "
        "or reload the RDMA driver; check 'rdma link' shows " +
        p.netdev;
  }
  c.fact("gid_index_for_peers_in", use);
  if (any_v2 && !routable) {
    auto& f = c.add(Severity::kWarn, FindingId::kGidLinkLocalOnly,
                    where +
                        " has RoCE v2 GIDs only for link-local addresses: no routable GID, "
                        "so only peers on the same link with IPv6 link-local can be reached");
    for (const auto& g : p.gids) f.evidence.push_back(gid_line(g));
    f.fix = "give " + p.netdev + " an IPv4 or global IPv6 address (ip addr add ADDR/PREFIX dev " +
            p.netdev + ")";
  }
  if (routable) check_index0(c, where, p, use);
}

}  // namespace

std::vector<CheckResult> check_gids(const Machine& m) {
  std::vector<CheckResult> out;
  bool asked = false;
  Result<std::vector<NetAddress>> addrs = std::vector<NetAddress>{};
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      if (!p.ethernet()) continue;  // InfiniBand GIDs carry no IP address
      if (!asked) {
        addrs = m.src.addresses();
        asked = true;
      }
      CheckResult c{
          .check = "gid-table", .layer = Layer::kDevice, .subject = port_subject(d.name, p.port)};
      check_port(c, d.name, p, addrs);
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
