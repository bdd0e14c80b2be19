#include "devices/inventory.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

#include "host/firewall.h"
#include "verbs/ibv.h"

namespace rdmacheck::devices {
namespace {

void enrich_from_verbs(Inventory& inv) {
  auto list = verbs::DeviceList::get();
  if (!list) {
    inv.notes.push_back(list.error().message());
    return;
  }
  for (auto& d : inv.devices) {
    ibv_device* dev = list->find(d.name);
    if (dev == nullptr) {
      inv.notes.push_back(
          fmt::format("{} is in sysfs but libibverbs has no provider for it "
                      "(install ibverbs-providers)",
                      d.name));
      continue;
    }
    auto ctx = verbs::open_device(dev);
    if (!ctx) {
      inv.notes.push_back(ctx.error().message());
      continue;
    }
    for (auto& p : d.ports) {
      auto attr = verbs::query_port(ctx->get(), static_cast<uint8_t>(p.port));
      if (!attr) {
        inv.notes.push_back(attr.error().message());
        continue;
      }
      p.active_mtu = verbs::mtu_bytes(attr->active_mtu);
      p.max_mtu = verbs::mtu_bytes(attr->max_mtu);
      p.lid = attr->lid;
    }
  }
}

std::string mtu_text(const std::optional<int>& m) { return m ? std::to_string(*m) : "-"; }

// The kernel's routes: `ip -j route show table all` live, or a capture's
// routing.json under another root (doctor --capture writes it).
std::vector<Route> read_routes(const FsRoot& fs) {
  std::vector<ToolRun> runs;
  if (fs.is_live()) {
    runs = run_tools({{"ip", "-j", "route", "show", "table", "all"}});
  } else if (auto text = fs.read("/capture/routing.json")) {
    runs = tool_runs_from_json(nlohmann::json::parse(*text, nullptr, false));
  }
  const ToolRun* r = successful_run(runs, kIpRoutes);
  return r ? parse_ip_routes(r->out) : std::vector<Route>{};
}

// Which NIC reaches which subnet, and each subnet two NICs share, once.
std::string routes_text(const std::vector<NicRoutes>& nics) {
  if (nics.empty()) return {};
  std::string out;
  out += "\nRoutes per NIC (main table)\n";
  out += fmt::format("{:<10} {:<10} {}\n", "NETDEV", "DEVICE", "SUBNETS");
  for (const auto& n : nics) {
    std::string subnets;
    for (const auto& sn : n.subnets) subnets += (subnets.empty() ? "" : ", ") + sn;
    out += fmt::format("{:<10} {:<10} {}\n", n.netdev, n.port, subnets.empty() ? "-" : subnets);
  }
  // Each shared subnet once, with every NIC that has it.
  std::vector<std::pair<std::string, std::string>> shared;  // subnet, "eth0 and eth1"
  for (const auto& n : nics) {
    for (const auto& sn : n.subnets) {
      const bool dup = std::any_of(n.duplicates.begin(), n.duplicates.end(),
                                   [&](const std::string& d) { return d.rfind(sn + " ", 0) == 0; });
      if (!dup) continue;
      auto it =
          std::find_if(shared.begin(), shared.end(), [&](const auto& p) { return p.first == sn; });
      if (it == shared.end()) {
        shared.emplace_back(sn, n.netdev);
      } else {
        it->second += " and " + n.netdev;
      }
    }
  }
  for (const auto& [sn, on] : shared) {
    out += fmt::format(
        "duplicate subnet: {} on {} (replies and ARP may use either NIC: see 'rdmacheck "
        "doctor', check multi-nic)\n",
        sn, on);
  }
  return out;
}
// Columns as wide as their widest cell, so an IPv6 address or a long GUID
// never pushes the next column out of line. A header starting with '>' is
// right-aligned (numbers).
class Table {
 public:
  explicit Table(std::vector<std::string> header) {
    for (auto& h : header) {
      right_.push_back(!h.empty() && h[0] == '>');
      if (right_.back()) h.erase(0, 1);
    }
    rows_.push_back(std::move(header));
  }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  [[nodiscard]] std::string text() const {
    std::vector<size_t> width(right_.size(), 0);
    for (const auto& r : rows_) {
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        const bool last = i + 1 == r.size();
        if (i > 0) line += ' ';
        line += right_[i] ? fmt::format("{:>{}}", r[i], width[i])
                          : (last ? r[i] : fmt::format("{:<{}}", r[i], width[i]));
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace

Inventory take_inventory(const FsRoot& fs, bool query_verbs) {
  Inventory inv;
  inv.devices = read_rdma_devices(fs);
  if (inv.devices.empty()) return inv;
  if (query_verbs) enrich_from_verbs(inv);
  inv.nics = nic_routes(inv.devices, read_routes(fs));
  return inv;
}

std::vector<NicRoutes> nic_routes(const std::vector<DeviceInfo>& devices,
                                  const std::vector<Route>& routes) {
  std::vector<NicRoutes> out;
  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      if (p.netdev.empty() || std::any_of(out.begin(), out.end(),
                                          [&](const NicRoutes& n) { return n.netdev == p.netdev; }))
        continue;
      out.push_back(
          {p.netdev, fmt::format("{}/{}", d.name, p.port), subnets_via(routes, p.netdev), {}});
    }
  }
  if (out.size() < 2) return {};
  for (auto& n : out) {
    for (const auto& subnet : n.subnets) {
      if (subnet.rfind("fe80:", 0) == 0) continue;  // every IPv6 NIC has fe80::/64
      for (const auto& other : out) {
        if (&other == &n) continue;
        if (std::find(other.subnets.begin(), other.subnets.end(), subnet) != other.subnets.end()) {
          n.duplicates.push_back(subnet + " also on " + other.netdev);
        }
      }
    }
  }
  return out;
}

std::vector<PortCounter> read_port_counters(const FsRoot& fs,
                                            const std::vector<DeviceInfo>& devices) {
  std::vector<PortCounter> out;
  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      const std::string base = fmt::format("/sys/class/infiniband/{}/ports/{}", d.name, p.port);
      for (const char* dir : {"counters", "hw_counters"}) {
        std::vector<std::string> names = fs.list(base + "/" + dir);
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
          if (name == "lifespan") continue;  // hw_counters' refresh interval in ms, not a counter
          const std::string text = fs.read_line(base + "/" + dir + "/" + name).value_or("");
          char* end = nullptr;
          const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
          if (text.empty() || end == nullptr || *end != '\0') continue;  // unreadable: left out
          out.push_back({fmt::format("{}/{}", d.name, p.port), std::string(dir) + "/" + name, v});
        }
      }
    }
  }
  return out;
}

nlohmann::json to_json(const Inventory& inv) {
  nlohmann::json devs = nlohmann::json::array();
  auto or_null = [](const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  for (const auto& d : inv.devices) {
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& p : d.ports) {
      nlohmann::json gids = nlohmann::json::array();
      for (const auto& g : p.gids) {
        gids.push_back({{"index", g.index},
                        {"gid", g.gid},
                        {"type", gid_type_name(g.type)},
                        {"address", g.address},
                        {"netdev", g.netdev}});
      }
      ports.push_back({{"port", p.port},
                       {"state", p.state_name},
                       {"state_num", p.state},
                       {"phys_state", p.phys_state_name},
                       {"phys_state_num", p.phys_state},
                       {"link_layer", std::string(name_of(p.link_layer))},
                       {"rate_gbps", p.rate_gbps},
                       {"netdev", p.netdev},
                       {"gids", gids},
                       // only libibverbs knows these: null when it was not asked (--root)
                       {"active_mtu_bytes", or_null(p.active_mtu)},
                       {"max_mtu_bytes", or_null(p.max_mtu)},
                       {"lid", or_null(p.lid)}});
    }
    devs.push_back({{"name", d.name},
                    {"node_type", d.node_type},
                    {"fw_ver", d.fw_ver},
                    {"node_guid", d.node_guid},
                    {"driver", d.driver},
                    {"pci_address", d.pci_address},
                    {"ports", ports}});
  }
  nlohmann::json nics = nlohmann::json::array();
  for (const auto& n : inv.nics) {
    nics.push_back({{"netdev", n.netdev},
                    {"device", n.port},
                    {"subnets", n.subnets},
                    {"duplicates", n.duplicates}});
  }
  nlohmann::json counters = nlohmann::json::array();
  for (const auto& c : inv.counters) {
    counters.push_back({{"port", c.port}, {"counter", c.name}, {"value", c.value}});
  }
  return {{"devices", devs},
          {"nics", nics},
          {"counters", counters},
          {"why_none", inv.why_none},
          {"notes", inv.notes}};
}

std::string format_text(const Inventory& inv, const TextStyle& style) {
  std::string out;
  if (inv.devices.empty()) {
    out += "No RDMA device found.\n";
    for (const auto& w : inv.why_none) out += "  - " + w + "\n";
    return out;
  }
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  Table devs({"DEVICE", "DRIVER", "FW_VER", "NODE_GUID", "PCI"});
  for (const auto& d : inv.devices) {
    devs.row({d.name, dash(d.driver), dash(d.fw_ver), dash(d.node_guid), dash(d.pci_address)});
  }
  out += devs.text();
  Table ports({"DEVICE", ">PORT", "STATE", "PHYS", "LINK", ">MTU", ">MAX", ">RATE", "NETDEV"});
  for (const auto& d : inv.devices) {
    for (const auto& p : d.ports) {
      ports.row({d.name, std::to_string(p.port), p.state_name, p.phys_state_name,
                 std::string(name_of(p.link_layer)), mtu_text(p.active_mtu), mtu_text(p.max_mtu),
                 fmt::format("{:g} Gb/s", p.rate_gbps), dash(p.netdev)});
    }
  }
  out += "\n";
  out += ports.text();
  Table gids({"DEVICE", ">PORT", ">INDEX", "GID", "TYPE", "ADDRESS", "NETDEV"});
  for (const auto& d : inv.devices) {
    for (const auto& p : d.ports) {
      for (const auto& g : p.gids) {
        gids.row({d.name, std::to_string(p.port), std::to_string(g.index), g.gid,
                  gid_type_name(g.type), dash(g.address), dash(g.netdev)});
      }
    }
  }
  out += "\nGID table\n";
  out += gids.text();
  out += routes_text(inv.nics);
  if (style.detail == Detail::kVerbose && !inv.counters.empty()) {
    Table counters({"PORT", "COUNTER", ">VALUE"});
    for (const auto& c : inv.counters) counters.row({c.port, c.name, std::to_string(c.value)});
    out += "\nPort counters\n";
    out += counters.text();
  }
  for (const auto& n : inv.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace rdmacheck::devices
