// Which NUMA node an RDMA device sits on and which CPUs belong to it, so a
// benchmark can pin itself (taskset -c CPUS) next to the NIC it drives.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sysfs/fs_root.h"

namespace rdmacheck {

struct NumaPlacement {
  int node = -1;        // -1: the device reports no node (single-node machine, VM, software device)
  std::string cpulist;  // the node's CPUs as sysfs prints them: "0-15,32-47"
  std::vector<int> cpus;  // the same, expanded
  std::string source;     // the numa_node file that said it, empty when none was found
  int nodes_online = 0;   // NUMA nodes the machine has (/sys/devices/system/node/node*)
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; malformed parts are skipped.
std::vector<int> parse_cpulist(const std::string& text);
// The same, all or nothing: nullopt when any part is malformed or no CPU is listed.
std::optional<std::vector<int>> parse_cpulist_strict(const std::string& text);

// The device's own PCI numa_node; for a software device (rxe, siw) that of
// the netdev under it.
NumaPlacement rdma_device_numa(const FsRoot& fs, const std::string& rdma_device,
                               const std::string& netdev);

}  // namespace rdmacheck
