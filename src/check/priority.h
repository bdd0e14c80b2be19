// Which priority check's packets carry when the user gave no -T/-S: the one
// this host's doctor read as configured for RoCE (a PFC-enabled priority,
// reached through DSCP when the port trusts DSCP, through the service level
// (VLAN PCP) when it trusts PCP), so a check tests the lossless class the
// traffic will use. Pure: decided over the doctor's document, tested over
// the fixtures.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/enum_table.h"

namespace rdmacheck::check {

enum class PrioritySource { kUser, kDoctor, kDefault };

struct PriorityChoice {
  int traffic_class = 0;  // GRH traffic class: DSCP << 2 | ECN bits
  int sl = 0;
  PrioritySource source = PrioritySource::kDefault;
  std::string why;  // one sentence: what doctor read, or why class 0 / level 0
};

// DOCTOR is doctor::to_json of this host; UNDER_TEST the port check tests
// ("mlx5_0/1", "" when unknown): its netdev's lossless facts decide.
PriorityChoice priority_from_doctor(const nlohmann::json& doctor, const std::string& under_test);

// The DSCP check marks a priority with: 26 (RoCE's customary class) when it
// maps there, else the lowest DSCP that does; -1 when none does.
int dscp_for_priority(const nlohmann::json& dscp_to_priority, int priority);

nlohmann::json to_json(const PriorityChoice& p);

}  // namespace rdmacheck::check

namespace rdmacheck {
template <>
struct EnumNames<check::PrioritySource> {
  static constexpr std::array<std::pair<check::PrioritySource, std::string_view>, 3> table = {{
      {check::PrioritySource::kUser, "user"},
      {check::PrioritySource::kDoctor, "doctor"},
      {check::PrioritySource::kDefault, "default"},
  }};
};
}  // namespace rdmacheck
