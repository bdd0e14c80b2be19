#include "host/numa.h"

#include <charconv>
#include <sstream>

namespace rdmacheck {
namespace {

bool to_int(const std::string& s, int* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

// One part of a cpulist, "8" or "10-11"; nullopt when malformed.
std::optional<std::pair<int, int>> cpu_range(const std::string& text) {
  const std::string part = trim(text);
  const auto dash = part.find('-');
  int lo = 0;
  int hi = 0;
  if (dash == std::string::npos) {
    if (!to_int(part, &lo)) return std::nullopt;
    hi = lo;
  } else if (!to_int(part.substr(0, dash), &lo) || !to_int(part.substr(dash + 1), &hi) || hi < lo) {
    return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

// Every CPU of TEXT's well-formed parts; *malformed counts the others.
std::vector<int> expand_cpulist(const std::string& text, int* malformed) {
  std::vector<int> cpus;
  std::istringstream in(trim(text));
  for (std::string part; std::getline(in, part, ',');) {
    const auto range = cpu_range(part);
    if (!range) {
      ++*malformed;
      continue;
    }
    for (int c = range->first; c <= range->second; ++c) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace

std::vector<int> parse_cpulist(const std::string& text) {
  int malformed = 0;
  return expand_cpulist(text, &malformed);
}

std::optional<std::vector<int>> parse_cpulist_strict(const std::string& text) {
  int malformed = 0;
  auto cpus = expand_cpulist(text, &malformed);
  if (malformed > 0 || cpus.empty()) return std::nullopt;
  return cpus;
}

NumaPlacement rdma_device_numa(const FsRoot& fs, const std::string& rdma_device,
                               const std::string& netdev) {
  NumaPlacement p;
  for (const auto& name : fs.list("/sys/devices/system/node")) {
    if (name.rfind("node", 0) == 0 && name.size() > 4) ++p.nodes_online;
  }
  std::vector<std::string> candidates = {"/sys/class/infiniband/" + rdma_device +
                                         "/device/numa_node"};
  if (!netdev.empty()) candidates.push_back("/sys/class/net/" + netdev + "/device/numa_node");
  for (const auto& path : candidates) {
    auto line = fs.read_line(path);
    int node = -1;
    if (!line || !to_int(*line, &node)) continue;
    p.source = path;
    p.node = node;
    break;
  }
  if (p.node < 0) return p;
  p.cpulist = fs.read_line("/sys/devices/system/node/node" + std::to_string(p.node) + "/cpulist")
                  .value_or("");
  p.cpus = parse_cpulist(p.cpulist);
  return p;
}

}  // namespace rdmacheck
