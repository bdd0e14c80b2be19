// Where the measuring thread runs: a core on the NIC's NUMA node
// (/sys/class/infiniband/<dev>/device/numa_node -> /sys/devices/system/node/
// nodeN/cpulist), or the core the user named; results wobble otherwise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sysfs/fs_root.h"

namespace rdmacheck::perf {

struct Placement {
  int cpu = -1;        // the core the thread is pinned to, -1 when not pinned
  int numa_node = -1;  // the device's NUMA node, -1 when unknown
  std::string note;    // why it is where it is, or why it is not pinned
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed.
std::optional<std::vector<int>> parse_cpulist(const std::string& text);

// Chooses the core (REQUESTED >= 0 wins) and pins the calling thread to it.
Placement place(const FsRoot& fs, const std::string& device, int requested);

}  // namespace rdmacheck::perf
