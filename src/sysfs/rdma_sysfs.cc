#include "sysfs/rdma_sysfs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

namespace rdmacheck {
namespace {

constexpr const char* kClass = "/sys/class/infiniband";

bool all_zero(const std::string& gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

std::vector<int> numeric_names(const FsRoot& fs, const std::string& dir) {
  std::vector<int> out;
  for (const auto& name : fs.list(dir)) {
    int v = 0;
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec == std::errc() && p == name.data() + name.size()) out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<GidEntry> read_gids(const FsRoot& fs, const std::string& port_dir) {
  std::vector<GidEntry> gids;
  for (int idx : numeric_names(fs, port_dir + "/gids")) {
    const auto n = std::to_string(idx);
    auto gid = fs.read_line(port_dir + "/gids/" + n);
    if (!gid || gid->empty() || all_zero(*gid)) continue;
    GidEntry e;
    e.index = idx;
    e.gid = *gid;
    e.type = parse_gid_type(fs.read_line(port_dir + "/gid_attrs/types/" + n).value_or(""));
    e.netdev = fs.read_line(port_dir + "/gid_attrs/ndevs/" + n).value_or("");
    e.address = gid_address(e.gid, e.type);
    gids.push_back(std::move(e));
  }
  return gids;
}

std::string port_netdev(const FsRoot& fs, const std::string& dev_dir, const PortInfo& p) {
  for (const auto& g : p.gids) {
    if (!g.netdev.empty()) return g.netdev;
  }
  // Hardware RoCE devices list their netdev under the parent PCI device.
  for (const auto& n : fs.list(dev_dir + "/device/net")) {
    auto dev_port = fs.read_line("/sys/class/net/" + n + "/dev_port");
    if (!dev_port || std::atoi(dev_port->c_str()) == p.port - 1) return n;
  }
  return {};
}

}  // namespace

GidType parse_gid_type(const std::string& text) {
  // The kernel prints "IB/RoCE v1" for type 0 and "RoCE v2" for type 1
  // (drivers/infiniband/core/cache.c gid_type_str).
  if (text == "RoCE v2") return GidType::kRoceV2;
  if (text == "IB/RoCE v1") return GidType::kRoceV1;
  if (text == "IB") return GidType::kIb;
  return GidType::kUnknown;
}

std::pair<int, std::string> parse_numbered(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {0, trim(text)};
  return {std::atoi(text.substr(0, colon).c_str()), trim(text.substr(colon + 1))};
}

double parse_rate_gbps(const std::string& text) {
  // strtod is locale dependent only in the decimal point, and sysfs always prints '.'.
  return std::strtod(text.c_str(), nullptr);
}

std::string gid_address(const std::string& gid, GidType type) {
  std::array<unsigned char, 16> raw{};
  std::string hex;
  for (char c : gid) {
    if (c != ':') hex.push_back(c);
  }
  if (hex.size() != 32) return {};
  for (size_t i = 0; i < 16; ++i) {
    raw[i] = static_cast<unsigned char>(std::strtoul(hex.substr(i * 2, 2).c_str(), nullptr, 16));
  }
  const bool mapped = std::all_of(raw.begin(), raw.begin() + 10, [](auto b) { return b == 0; }) &&
                      raw[10] == 0xff && raw[11] == 0xff;
  std::array<char, INET6_ADDRSTRLEN> buf{};
  if (mapped) {
    inet_ntop(AF_INET, raw.data() + 12, buf.data(), buf.size());
    return buf.data();
  }
  // InfiniBand GIDs are subnet prefix + port GUID, not addresses.
  if (type == GidType::kIb) return {};
  inet_ntop(AF_INET6, raw.data(), buf.data(), buf.size());
  return buf.data();
}

std::vector<DeviceInfo> read_rdma_devices(const FsRoot& fs) {
  std::vector<DeviceInfo> devices;
  for (const auto& name : fs.list(kClass)) {
    const std::string dir = std::string(kClass) + "/" + name;
    DeviceInfo d;
    d.name = name;
    d.node_type = fs.read_line(dir + "/node_type").value_or("");
    d.fw_ver = fs.read_line(dir + "/fw_ver").value_or("");
    d.node_guid = fs.read_line(dir + "/node_guid").value_or("");
    if (auto drv = fs.link_target(dir + "/device/driver")) {
      d.driver = *drv;
      d.pci_address = fs.link_target(dir + "/device").value_or("");
    } else if (name.rfind("rxe", 0) == 0 || fs.read_line(dir + "/parent").has_value()) {
      d.driver = name.rfind("siw", 0) == 0 ? "siw" : "rxe";
    }
    for (int port : numeric_names(fs, dir + "/ports")) {
      const std::string pdir = dir + "/ports/" + std::to_string(port);
      PortInfo p;
      p.port = port;
      std::tie(p.state, p.state_name) = parse_numbered(fs.read_line(pdir + "/state").value_or(""));
      std::tie(p.phys_state, p.phys_state_name) =
          parse_numbered(fs.read_line(pdir + "/phys_state").value_or(""));
      p.link_layer = parse_enum<LinkLayer>(fs.read_line(pdir + "/link_layer").value_or(""))
                         .value_or(LinkLayer::kUnknown);
      p.rate = fs.read_line(pdir + "/rate").value_or("");
      p.rate_gbps = parse_rate_gbps(p.rate);
      p.gids = read_gids(fs, pdir);
      if (p.ethernet()) p.netdev = port_netdev(fs, dir, p);
      d.ports.push_back(std::move(p));
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace rdmacheck
