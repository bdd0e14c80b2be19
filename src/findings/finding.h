// The findings model shared by every command: a stable id, a severity, the
// layer it belongs to, a one-line summary, the evidence (values read and
// where from) and the fix. Commands produce findings; printers render them.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "base/result.h"
#include "findings/ids.h"

namespace rdmacheck {

enum class Severity { kOk, kInfo, kWarn, kFail };
enum class Layer { kDevice, kConnection, kPerformance };

template <>
struct EnumNames<Severity> {
  static constexpr std::array<std::pair<Severity, std::string_view>, 4> table = {{
      {Severity::kOk, "ok"},
      {Severity::kInfo, "info"},
      {Severity::kWarn, "warn"},
      {Severity::kFail, "fail"},
  }};
};
template <>
struct EnumNames<Layer> {
  static constexpr std::array<std::pair<Layer, std::string_view>, 3> table = {{
      {Layer::kDevice, "device"},
      {Layer::kConnection, "connection"},
      {Layer::kPerformance, "performance"},
  }};
};
// The table's names are literals: .data() is a C string.
inline const char* severity_name(Severity s) { return name_of(s).data(); }
inline const char* layer_name(Layer l) { return name_of(l).data(); }

struct Finding {
  FindingId id = FindingId::kForeign;  // on the wire its kebab-case name: "firewall-blocks-roce"
  Severity severity = Severity::kInfo;
  Layer layer = Layer::kDevice;
  std::string summary;  // one line
  std::vector<std::string> evidence;
  std::string fix;      // a command or action; empty when nothing to do
  std::string host;     // which host it concerns, when more than one
  std::string subject;  // what on that host: "mlx4_0/2" (a device's port), "eth0", "host"
  // A peer's id this build does not know (id is kForeign): carried, not dropped.
  std::string foreign_id;

  [[nodiscard]] bool is(FindingId x) const { return id == x; }
  [[nodiscard]] bool is_any(std::initializer_list<FindingId> xs) const {
    return std::find(xs.begin(), xs.end(), id) != xs.end();
  }
};

// The id as the wire and JSON spell it (a foreign id as the peer sent it).
std::string_view id_name(const Finding& f);
bool same_id(const Finding& a, const Finding& b);
// The id a peer sent: a known name is typed, any other is carried as foreign.
void set_id_from_wire(Finding& f, std::string name);

// A finding with its identity and summary; evidence and fix are added by the rule that raises it.
Finding make_finding(FindingId id, Severity severity, Layer layer, std::string summary);

nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const std::vector<Finding>& fs);
// A finding back from its JSON form (to_json wrote it, here or on a peer).
Result<Finding> finding_from_json(const nlohmann::json& j);

// Exit status for a list of findings: 0 none at warn or above, 1 warnings, 2 failures.
int exit_status(const std::vector<Finding>& fs);
Severity worst(const std::vector<Finding>& fs);
// Whether FS holds a finding with ID.
bool has_finding(const std::vector<Finding>& fs, FindingId id);

// Text rendering: "FAIL firewall-blocks-roce: summary" + indented evidence and fix,
// then "(rdmacheck explain firewall-blocks-roce)", where its catalogue entry is.
std::string format_finding(const Finding& f);

}  // namespace rdmacheck
