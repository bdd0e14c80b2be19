#include "sysfs/port_counters.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace rdmacheck {
namespace {

constexpr std::array kSeqGap = {"out_of_seq_request",  "rcvd_seq_err",    "seq_err_naks",
                                "seq_err_naks_rcvd",   "out_of_sequence", "packet_seq_err",
                                "implied_nak_seq_err", "missing_resp"};

}  // namespace

Counters read_counters(const FsRoot& fs, const std::string& device, int port) {
  Counters c;
  for (const char* dir : {"hw_counters", "counters"}) {
    const std::string base = fmt::format("/sys/class/infiniband/{}/ports/{}/{}", device, port, dir);
    for (const auto& name : fs.list(base)) {
      if (name == "lifespan") continue;  // a setting (ms between updates), not a count
      const auto text = fs.read_line(base + "/" + name);
      if (!text || text->empty()) continue;
      uint64_t v = 0;
      const auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
      if (ec == std::errc() && p == text->data() + text->size()) {
        c[std::string(dir) + "/" + name] = v;
      }
    }
  }
  return c;
}

Counters delta(const Counters& before, const Counters& after) {
  Counters d;
  for (const auto& [name, v] : after) {
    auto it = before.find(name);
    if (it != before.end() && v > it->second) d[name] = v - it->second;
  }
  return d;
}

bool is_sequence_gap_counter(const std::string& name) {
  const auto slash = name.rfind('/');
  const std::string leaf = slash == std::string::npos ? name : name.substr(slash + 1);
  return std::any_of(kSeqGap.begin(), kSeqGap.end(), [&](const char* n) { return leaf == n; });
}

uint64_t sequence_gaps(const Counters& d) {
  uint64_t s = 0;
  for (const auto& [name, v] : d) {
    if (is_sequence_gap_counter(name)) s += v;
  }
  return s;
}

std::string describe_sequence_gaps(const Counters& d) {
  std::string out;
  for (const auto& [name, v] : d) {
    if (is_sequence_gap_counter(name))
      out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, v);
  }
  return out;
}

}  // namespace rdmacheck
