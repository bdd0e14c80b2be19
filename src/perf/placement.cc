#include "perf/placement.h"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "host/numa.h"

namespace rdmacheck::perf {
namespace {

bool allowed(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}

}  // namespace

std::optional<std::vector<int>> parse_cpulist(const std::string& text) {
  return parse_cpulist_strict(text);
}

Placement place(const FsRoot& fs, const std::string& device, int requested) {
  Placement p;
  // The RDMA device's own numa_node only (no netdev given: a software device stays unpinned).
  const NumaPlacement numa = rdma_device_numa(fs, device, "");
  p.numa_node = numa.node;
  int cpu = requested;
  if (cpu < 0) {
    if (p.numa_node < 0) {
      p.note = fmt::format(
          "{}'s NUMA node is unknown (software device or single node): not "
          "pinned; use --cpu N",
          device);
      return p;
    }
    const auto cpus = parse_cpulist(numa.cpulist);
    if (cpus) {
      const auto it = std::find_if(cpus->begin(), cpus->end(), allowed);
      if (it != cpus->end()) cpu = *it;
    }
    if (cpu < 0) {
      p.note = fmt::format("no usable core on NUMA node {}: not pinned", p.numa_node);
      return p;
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    p.note = fmt::format("could not pin to core {}: {}", cpu, std::strerror(errno));
    return p;
  }
  p.cpu = cpu;
  p.note = requested >= 0
               ? fmt::format("pinned to core {} (--cpu)", cpu)
               : fmt::format("pinned to core {} on {}'s NUMA node {}", cpu, device, p.numa_node);
  return p;
}

}  // namespace rdmacheck::perf
