// What `rdmacheck devices` shows: sysfs's view of every RDMA device, with the
// port MTUs and LID that only ibv_query_port knows, or why there is nothing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "net/routes.h"
#include "sysfs/fs_root.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::devices {

// On a host with two or more RDMA NICs: the subnets each NIC's netdev
// reaches directly (the main routing table), and those it shares with
// another netdev (a duplicate subnet: see doctor's "multi-nic" check).
struct NicRoutes {
  std::string netdev;
  std::string port;                     // "rxe0/1"
  std::vector<std::string> subnets;     // "198.18.0.0/24", in the kernel's order
  std::vector<std::string> duplicates;  // "198.18.0.0/24 also on eth0"
};

// One port counter as sysfs has it: ports/N/counters (InfiniBand
// PortCounters) and ports/N/hw_counters (the driver's own).
struct PortCounter {
  std::string port;  // "mlx5_0/1"
  std::string name;  // "hw_counters/out_of_sequence"
  uint64_t value = 0;
};

struct Inventory {
  std::vector<DeviceInfo> devices;
  std::vector<PortCounter> counters;  // devices -v only: every port's, by port then name
  std::vector<NicRoutes> nics;        // empty unless two or more RDMA netdevs
  // When devices is empty: doctor's no-rdma-device finding as lines (summary,
  // evidence, "fix: ..."), filled by the caller (doctor sits beside devices).
  std::vector<std::string> why_none;
  std::vector<std::string> notes;  // e.g. a device sysfs shows but verbs cannot open
};

// Reads sysfs under fs; when query_verbs, also asks libibverbs for port MTUs.
Inventory take_inventory(const FsRoot& fs, bool query_verbs);

// devices -v: every counter of every port of DEVICES under FS (what
// `ibv_devinfo -v` users then read with perfquery or `rdma statistic`).
std::vector<PortCounter> read_port_counters(const FsRoot& fs,
                                            const std::vector<DeviceInfo>& devices);

// Pure: each RDMA netdev's subnets from ROUTES; empty with fewer than two.
std::vector<NicRoutes> nic_routes(const std::vector<DeviceInfo>& devices,
                                  const std::vector<Route>& routes);

nlohmann::json to_json(const Inventory& inv);
// 0 when at least one RDMA device is there, 2 when none.
inline int exit_status(const Inventory& inv) { return inv.devices.empty() ? 2 : 0; }
std::string format_text(const Inventory& inv, const TextStyle& style = {});

}  // namespace rdmacheck::devices
