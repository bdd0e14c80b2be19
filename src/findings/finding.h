// The findings model shared by every command: a stable id, a severity, the
// layer it belongs to, a one-line summary, the evidence (values read and
// where from) and the fix. Commands produce findings; printers render them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/enum_table.h"

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
  std::string id;  // kebab-case, stable: "firewall-blocks-roce"
  Severity severity = Severity::kInfo;
  Layer layer = Layer::kDevice;
  std::string summary;  // one line
  std::vector<std::string> evidence;
  std::string fix;      // a command or action; empty when nothing to do
  std::string host;     // which host it concerns, when more than one
  std::string subject;  // what on that host: "mlx4_0/2" (a device's port), "eth0", "host"
};

// A finding with its identity and summary; evidence and fix are added by the rule that raises it.
Finding make_finding(std::string id, Severity severity, Layer layer, std::string summary);

nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const std::vector<Finding>& fs);

// Exit status for a list of findings: 0 none at warn or above, 1 warnings, 2 failures.
int exit_status(const std::vector<Finding>& fs);
Severity worst(const std::vector<Finding>& fs);

// Text rendering: "FAIL firewall-blocks-roce: summary" + indented evidence and fix.
std::string format_finding(const Finding& f);

}  // namespace rdmacheck
