// The RDMA devices of a machine as sysfs shows them
// (Documentation/ABI/stable/sysfs-class-infiniband): devices, ports, GIDs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "sysfs/fs_root.h"

namespace rdmacheck {

enum class GidType { kIb, kRoceV1, kRoceV2, kUnknown };
template <>
struct EnumNames<GidType> {
  static constexpr std::array<std::pair<GidType, std::string_view>, 4> table = {{
      {GidType::kIb, "IB"},
      {GidType::kRoceV1, "RoCE v1"},
      {GidType::kRoceV2, "RoCE v2"},
      {GidType::kUnknown, "?"},
  }};
};
inline const char* gid_type_name(GidType t) { return name_of(t).data(); }

// A port's link layer, as sysfs's link_layer names it.
enum class LinkLayer { kUnknown, kEthernet, kInfiniBand };
template <>
struct EnumNames<LinkLayer> {
  static constexpr std::array<std::pair<LinkLayer, std::string_view>, 3> table = {{
      {LinkLayer::kUnknown, "unknown"},
      {LinkLayer::kEthernet, "Ethernet"},
      {LinkLayer::kInfiniBand, "InfiniBand"},
  }};
};

// A port's logical state, as sysfs's state file numbers it ("4: ACTIVE").
enum class PortState { kUnknown, kDown, kInit, kArmed, kActive, kActiveDefer };
template <>
struct EnumNames<PortState> {
  static constexpr std::array<std::pair<PortState, std::string_view>, 6> table = {{
      {PortState::kUnknown, "?"},
      {PortState::kDown, "DOWN"},
      {PortState::kInit, "INIT"},
      {PortState::kArmed, "ARMED"},
      {PortState::kActive, "ACTIVE"},
      {PortState::kActiveDefer, "ACTIVE_DEFER"},
  }};
};

struct GidEntry {
  int index = 0;
  std::string gid;  // as sysfs prints it: 8 groups of 4 hex digits
  GidType type = GidType::kUnknown;
  std::string netdev;   // gid_attrs/ndevs/N; empty on InfiniBand
  std::string address;  // the IP address the GID carries ("198.18.0.1", "fe80::..."), if any
  [[nodiscard]] bool link_local() const { return address.rfind("fe80:", 0) == 0; }
  [[nodiscard]] bool ipv4() const { return address.find('.') != std::string::npos; }
};

struct PortInfo {
  int port = 0;
  int state = 0;           // IB port state number: 1 DOWN 2 INIT 3 ARMED 4 ACTIVE 5 ACTIVE_DEFER
  std::string state_name;  // "ACTIVE"
  [[nodiscard]] PortState port_state() const {
    return state >= 1 && state <= 5 ? static_cast<PortState>(state) : PortState::kUnknown;
  }
  [[nodiscard]] bool active() const { return port_state() == PortState::kActive; }
  int phys_state = 0;  // 1 Sleep 2 Polling 3 Disabled 4 PortConfigurationTraining 5 LinkUp ...
  std::string phys_state_name;
  LinkLayer link_layer = LinkLayer::kUnknown;
  [[nodiscard]] bool ethernet() const { return link_layer == LinkLayer::kEthernet; }  // RoCE
  std::string rate;  // "2.5 Gb/sec (1X SDR)"
  double rate_gbps = 0;
  std::string netdev;             // the Ethernet netdev behind the port (RoCE), if known
  std::optional<int> active_mtu;  // bytes; from ibv_query_port, not in sysfs
  std::optional<int> max_mtu;
  std::optional<int> lid;
  std::vector<GidEntry> gids;  // populated (non-zero) entries only, by index
};

struct DeviceInfo {
  std::string name;       // "rxe0", "mlx5_0"
  std::string node_type;  // "1: CA"
  std::string fw_ver;
  std::string node_guid;
  std::string driver;  // kernel driver of the parent device, or "rxe"/"siw" for software devices
  std::string pci_address;  // "0000:3b:00.0" for PCI devices, empty for software ones
  std::vector<PortInfo> ports;
};

// Parses "4: ACTIVE" into {4, "ACTIVE"}.
std::pair<int, std::string> parse_numbered(const std::string& text);
// Parses "2.5 Gb/sec (1X SDR)" or "100 Gb/sec (4X EDR)" into Gb/s.
double parse_rate_gbps(const std::string& text);
// The IP address a GID carries: IPv4-mapped GIDs give dotted quad, others IPv6 text;
// empty for GIDs that are not IP addresses (InfiniBand subnet-prefix GIDs).
std::string gid_address(const std::string& gid, GidType type);
GidType parse_gid_type(const std::string& text);

// Reads every device under /sys/class/infiniband. Missing files leave fields empty.
std::vector<DeviceInfo> read_rdma_devices(const FsRoot& fs);

}  // namespace rdmacheck
