#include "perf/placement.h"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace rdmacheck::perf {
namespace {

std::optional<int> number(std::string_view s) {
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool allowed(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}

}  // namespace

std::optional<std::vector<int>> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto dash = part.find('-');
    const auto lo = number(part.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

Placement place(const FsRoot& fs, const std::string& device, int requested) {
  Placement p;
  const auto node = fs.read_line(fmt::format("/sys/class/infiniband/{}/device/numa_node", device));
  if (node) p.numa_node = number(*node).value_or(-1);
  int cpu = requested;
  if (cpu < 0) {
    if (p.numa_node < 0) {
      p.note = fmt::format(
          "{}'s NUMA node is unknown (software device or single node): not "
          "pinned; use --cpu N",
          device);
      return p;
    }
    const auto list =
        fs.read_line(fmt::format("/sys/devices/system/node/node{}/cpulist", p.numa_node));
    const auto cpus = list ? parse_cpulist(*list) : std::nullopt;
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
