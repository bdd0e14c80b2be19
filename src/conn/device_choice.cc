#include "conn/device_choice.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "conn/endpoint.h"

namespace rdmacheck::conn {
namespace {

using Raw = std::array<uint8_t, 16>;

// The GID that carries ADDRESS (IPv4 as v4-mapped, or IPv6).
std::optional<Raw> raw_of_address(const std::string& address) {
  Raw g{};
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    g[10] = 0xff;
    g[11] = 0xff;
    std::copy_n(reinterpret_cast<const uint8_t*>(&v4), 4, g.begin() + 12);
    return g;
  }
  if (inet_pton(AF_INET6, address.c_str(), g.data()) == 1) return g;
  return std::nullopt;
}

bool zero(const Raw& g) {
  return std::all_of(g.begin(), g.end(), [](uint8_t b) { return b == 0; });
}
bool ipv4_mapped(const Raw& g) { return g[10] == 0xff && g[11] == 0xff; }
bool link_local(const Raw& g) { return g[0] == 0xfe && (g[1] & 0xc0) == 0x80; }

// The GID as sysfs prints it, by the endpoint's one formatter.
std::string text(const Raw& g) {
  ibv_gid gid{};
  std::copy(g.begin(), g.end(), std::begin(gid.raw));
  return gid_text(gid);
}

}  // namespace

Result<DevicePort> choose_device_port(const std::vector<DeviceCandidate>& devices,
                                      const DeviceChoice& forced,
                                      const std::string& local_address) {
  auto port_of = [&](const DeviceCandidate& d) -> Result<int> {
    const int n = static_cast<int>(d.ports.size());
    if (forced.ib_port > 0) {
      if (forced.ib_port > n) {
        return plain_error("port",
                           fmt::format("{} has {} port(s), not {}", d.name, n, forced.ib_port));
      }
      return forced.ib_port;
    }
    for (const auto& p : d.ports) {
      if (p.active) return p.port;
    }
    return 1;
  };
  if (!forced.device.empty()) {
    for (const auto& d : devices) {
      if (d.name != forced.device) continue;
      auto p = port_of(d);
      if (!p) return p.error();
      return DevicePort{d.name, *p, "forced with -d"};
    }
    return plain_error("device", fmt::format("no RDMA device named '{}'", forced.device));
  }
  // The NIC the kernel routes to the peer through: the one carrying our source address.
  if (const auto want = raw_of_address(local_address)) {
    std::optional<DevicePort> inactive;
    for (const auto& d : devices) {
      for (const auto& c : d.ports) {
        if (forced.ib_port > 0 && c.port != forced.ib_port) continue;
        const bool carries = std::any_of(c.gids.begin(), c.gids.end(), [&](const GidCandidate& g) {
          return g.raw == *want && g.type != GidType::kRoceV1;
        });
        if (!carries) continue;
        const std::string why = fmt::format(
            "its GID table carries {}, the address this host reaches the peer from", local_address);
        if (c.active) return DevicePort{d.name, c.port, why};
        if (!inactive) inactive = DevicePort{d.name, c.port, why + " (the port is not ACTIVE)"};
      }
    }
    if (inactive) return *inactive;
  }
  for (const auto& d : devices) {
    auto p = port_of(d);
    if (!p) continue;
    for (const auto& c : d.ports) {
      if (c.port == *p && c.active) return DevicePort{d.name, *p, "the first ACTIVE port"};
    }
  }
  if (devices.empty()) {
    return plain_error("device", "no RDMA device found (see 'rdmacheck devices')");
  }
  auto p = port_of(devices.front());
  if (!p) return p.error();
  return DevicePort{devices.front().name, *p, "no ACTIVE port: the first device"};
}

Result<GidChoice> choose_gid(const std::vector<GidCandidate>& gids, bool ethernet, int forced,
                             const std::string& local_address, const std::string& where) {
  GidChoice c;
  const auto want = raw_of_address(local_address);
  if (forced >= 0) {
    auto it = std::find_if(gids.begin(), gids.end(), [&](const GidCandidate& g) {
      return g.index == forced && !zero(g.raw);
    });
    if (it == gids.end()) {
      return plain_error("gid", fmt::format("{} GID index {} is empty", where, forced));
    }
    c.index = forced;
    if (it->type == GidType::kRoceV1) {
      c.warnings.push_back(
          fmt::format("GID index {} is RoCE v1 (not routable, no UDP 4791)", forced));
    }
    if (link_local(it->raw)) {
      c.warnings.push_back(fmt::format("GID index {} is a link-local IPv6 address", forced));
    }
    if (want && it->raw != *want) {
      c.warnings.push_back(
          fmt::format("GID index {} ({}) is not {}, the address this host uses towards the peer",
                      forced, text(it->raw), local_address));
    }
    return c;
  }
  const GidCandidate* fallback = nullptr;
  for (const auto& g : gids) {
    if (zero(g.raw)) continue;
    if (!ethernet) {  // InfiniBand: the first is the port GID
      c.index = g.index;
      return c;
    }
    if (g.type != GidType::kRoceV2) continue;
    if (want && g.raw == *want) {
      c.index = g.index;
      return c;
    }
    if (fallback == nullptr && ipv4_mapped(g.raw)) fallback = &g;
  }
  if (fallback == nullptr) {
    return plain_error("gid", fmt::format("{} has no RoCE v2 GID for {}: give the netdev an IP "
                                          "address, or choose one with -x",
                                          where, local_address));
  }
  c.index = fallback->index;
  if (want) {
    c.warnings.push_back(fmt::format("no RoCE v2 GID carries {}; using index {} ({})",
                                     local_address, fallback->index, text(fallback->raw)));
  }
  return c;
}

std::string address_gid_text(const std::string& address) {
  const auto g = raw_of_address(address);
  return g ? text(*g) : std::string();
}

std::string forced_flags(const DeviceChoice& forced) {
  std::string out;
  auto add = [&](const std::string& flag) { out += (out.empty() ? "" : " ") + flag; };
  if (!forced.device.empty()) add("-d " + forced.device);
  if (forced.ib_port > 0) add(fmt::format("--ib-port {}", forced.ib_port));
  if (forced.gid_index >= 0) add(fmt::format("-x {}", forced.gid_index));
  return out;
}

std::string explain_choice(const ChoiceStory& s) {
  const std::string gid =
      fmt::format("GID index {}{}", s.gid_index, s.gid_type.empty() ? "" : " (" + s.gid_type + ")");
  const std::string chosen = fmt::format("{} port {}, {}", s.device, s.port, gid);
  if (!s.forced.empty()) {
    // The forced GID's netdev is not the route's: name them apart.
    std::string out = fmt::format("forced by {}: {}{}", s.forced, chosen,
                                  s.netdev.empty() ? "" : " on " + s.netdev);
    if (!s.local_address.empty() && !s.server) {
      out += fmt::format("; the route to {} leaves from {}", s.peer_address, s.local_address);
    }
    return out;
  }
  if (s.local_address.empty()) return fmt::format("{} ({})", chosen, s.device_why);
  const std::string via = s.netdev.empty() ? "" : " via " + s.netdev;
  const std::string route =
      s.server
          ? fmt::format("the client ({}) connected to {}{}", s.peer_address, s.local_address, via)
          : fmt::format("route to {} from {}{}", s.peer_address, s.local_address, via);
  return fmt::format("{} -> {} ({})", route, chosen, s.device_why);
}

std::vector<DeviceCandidate> device_candidates(const std::vector<DeviceInfo>& devices) {
  std::vector<DeviceCandidate> out;
  for (const auto& d : devices) {
    DeviceCandidate c{d.name, {}};
    for (const auto& p : d.ports)
      c.ports.push_back(PortCandidate{p.port, p.active(), gid_candidates(p)});
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<GidCandidate> gid_candidates(const PortInfo& port) {
  std::vector<GidCandidate> out;
  for (const auto& g : port.gids) {
    GidCandidate c;
    c.index = g.index;
    c.type = g.type;
    const auto gid = parse_gid(g.gid);  // the endpoint's one parser of sysfs GID text
    if (!gid) continue;
    std::copy(std::begin(gid->raw), std::end(gid->raw), c.raw.begin());
    out.push_back(c);
  }
  return out;
}

}  // namespace rdmacheck::conn
