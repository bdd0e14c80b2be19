#include "check/priority.h"

#include <fmt/core.h>

namespace rdmacheck::check {
namespace {

constexpr int kEcnCapable = 2;  // ECT(0) in the GRH's low bits, as perftest's -T 106 for DSCP 26

const nlohmann::json* find_check(const nlohmann::json& doctor, const std::string& check,
                                 const std::string& subject) {
  if (!doctor.contains("checks")) return nullptr;
  for (const auto& c : doctor["checks"]) {
    if (c.value("check", "") == check && (subject.empty() || c.value("subject", "") == subject)) {
      return &c;
    }
  }
  return nullptr;
}

// The netdev under the port under test, from doctor's netdev check.
std::string netdev_of(const nlohmann::json& doctor, const std::string& under_test) {
  const auto* c = find_check(doctor, "netdev", under_test);
  if (c == nullptr || !(*c)["facts"].contains("netdev")) return {};
  return (*c)["facts"]["netdev"].get<std::string>();
}

PriorityChoice fallback(std::string why) {
  return {.traffic_class = 0, .sl = 0, .source = PrioritySource::kDefault, .why = std::move(why)};
}

}  // namespace

int dscp_for_priority(const nlohmann::json& dscp_to_priority, int priority) {
  if (!dscp_to_priority.is_object()) return -1;
  const std::string customary = "26";
  if (dscp_to_priority.contains(customary) && dscp_to_priority[customary] == priority) return 26;
  int best = -1;
  for (const auto& [dscp, prio] : dscp_to_priority.items()) {
    const int d = std::stoi(dscp);
    if (prio == priority && (best < 0 || d < best)) best = d;
  }
  return best;
}

PriorityChoice priority_from_doctor(const nlohmann::json& doctor, const std::string& under_test) {
  std::string netdev = netdev_of(doctor, under_test);
  const nlohmann::json* lossless = find_check(doctor, "lossless", netdev);
  if (lossless == nullptr) {
    return fallback("doctor read no lossless settings for the port under test: class 0, level 0");
  }
  netdev = (*lossless)["subject"].get<std::string>();
  const auto& facts = (*lossless)["facts"];
  if (!facts.contains("pfc_priorities")) {
    return fallback("PFC on " + netdev + " is not readable: class 0, level 0");
  }
  const auto& pfc = facts["pfc_priorities"];
  if (pfc.empty()) return fallback("no priority has PFC on " + netdev + ": class 0, level 0");
  // The highest PFC priority: RoCE's lossless class sits above the default 0
  // on the usual configurations (3 with CNPs on 6 is NVIDIA's default).
  const int prio = pfc.back().get<int>();
  const std::string trust = facts.value("trust", "pcp");
  const std::string pfc_text = fmt::format("PFC on priority {} of {}", prio, netdev);
  if (trust == "dscp") {
    const int dscp = dscp_for_priority(facts.value("dscp_to_priority", nlohmann::json()), prio);
    if (dscp < 0) {
      return fallback(pfc_text + ", trust dscp, but no DSCP maps to priority " +
                      std::to_string(prio) + ": class 0, level 0");
    }
    const int tc = dscp << 2 | kEcnCapable;
    return {.traffic_class = tc,
            .sl = 0,
            .source = PrioritySource::kDoctor,
            .why = fmt::format("{}, trust dscp, DSCP {} -> priority {}: traffic class {}", pfc_text,
                               dscp, prio, tc)};
  }
  return {.traffic_class = 0,
          .sl = prio,
          .source = PrioritySource::kDoctor,
          .why = fmt::format("{}, trust pcp: the VLAN priority comes from the service level {}",
                             pfc_text, prio)};
}

nlohmann::json to_json(const PriorityChoice& p) {
  return {{"traffic_class", p.traffic_class},
          {"sl", p.sl},
          {"source", name_of(p.source)},
          {"why", p.why}};
}

}  // namespace rdmacheck::check
