#include "mesh/probe_result.h"

#include <fmt/core.h>

#include <limits>
#include <stdexcept>

namespace rdmacheck::mesh {
namespace {

// J[KEY] as a T, or an error: nlohmann's get<int> of 2.2e26 or of 2^40 is a
// cast out of range (undefined behaviour; the mesh fuzz target found it).
template <typename T>
T integer_at(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  using L = std::numeric_limits<T>;
  bool fits = false;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <= static_cast<uint64_t>(L::max());
  } else if (v.is_number_integer()) {
    const auto x = v.get<int64_t>();
    fits = x >= 0 ? static_cast<uint64_t>(x) <= static_cast<uint64_t>(L::max())
                  : L::is_signed && x >= static_cast<int64_t>(L::min());
  }
  if (!fits) throw std::out_of_range(fmt::format("\"{}\" is not an integer in range", key));
  return v.get<T>();
}

}  // namespace

nlohmann::json to_json(const Probe& p) {
  nlohmann::json j = {{"from", p.from},
                      {"to", p.to},
                      {"round", p.round},
                      {"connected", p.connected()},
                      {"stage", name_of(p.failed)},
                      {"error", p.error},
                      {"pings_sent", p.pings_sent},
                      {"pings_ok", p.pings_ok},
                      {"rtt_us", p.rtt_us},
                      {"rtt_median_us", p.rtt_median_us},
                      {"loss_counters", p.loss_counters},
                      {"findings", to_json(p.findings)},
                      {"seconds", p.seconds}};
  j["bw_gbps"] = p.bw_gbps < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.bw_gbps);
  if (!p.bw_error.empty()) j["bw_error"] = p.bw_error;
  return j;
}

Result<Probe> probe_from_json(const nlohmann::json& j) {
  try {
    Probe p;
    p.from = integer_at<int>(j, "from");
    p.to = integer_at<int>(j, "to");
    p.round = integer_at<int>(j, "round");
    auto stage = parse_enum<conn::Stage>(j.at("stage").get<std::string>());
    if (!stage) return plain_error("mesh", "a probe from a rank: unknown stage");
    p.failed = *stage;
    p.error = j.at("error").get<std::string>();
    p.pings_sent = integer_at<int>(j, "pings_sent");
    p.pings_ok = integer_at<int>(j, "pings_ok");
    p.rtt_us = j.at("rtt_us").get<double>();
    p.rtt_median_us = j.at("rtt_median_us").get<double>();
    p.bw_gbps = j.at("bw_gbps").is_null() ? -1 : j.at("bw_gbps").get<double>();
    p.bw_error = j.value("bw_error", "");
    p.loss_counters = integer_at<uint64_t>(j, "loss_counters");
    p.seconds = j.at("seconds").get<double>();
    for (const auto& f : j.at("findings")) {
      auto fr = finding_from_json(f);
      if (!fr) return fr.error();
      p.findings.push_back(std::move(*fr));
    }
    return p;
  } catch (const std::exception& e) {  // nlohmann's, and integer_at's out_of_range
    return plain_error("mesh", fmt::format("a probe from a rank: {}", e.what()));
  }
}

}  // namespace rdmacheck::mesh
