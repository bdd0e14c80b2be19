#include "findings/finding.h"

#include <fmt/core.h>

#include <algorithm>

namespace rdmacheck {

Finding make_finding(std::string id, Severity severity, Layer layer, std::string summary) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.layer = layer;
  f.summary = std::move(summary);
  return f;
}

nlohmann::json to_json(const Finding& f) {
  nlohmann::json j = {{"id", f.id},
                      {"severity", severity_name(f.severity)},
                      {"layer", layer_name(f.layer)},
                      {"summary", f.summary},
                      {"evidence", f.evidence},
                      {"fix", f.fix}};
  if (!f.host.empty()) j["host"] = f.host;
  if (!f.subject.empty()) j["subject"] = f.subject;
  return j;
}

nlohmann::json to_json(const std::vector<Finding>& fs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs) a.push_back(to_json(f));
  return a;
}

Severity worst(const std::vector<Finding>& fs) {
  Severity w = Severity::kOk;
  for (const auto& f : fs) w = std::max(w, f.severity);
  return w;
}

int exit_status(const std::vector<Finding>& fs) {
  switch (worst(fs)) {
    case Severity::kFail:
      return 2;
    case Severity::kWarn:
      return 1;
    default:
      return 0;
  }
}

std::string format_finding(const Finding& f) {
  std::string sev = severity_name(f.severity);
  std::transform(sev.begin(), sev.end(), sev.begin(), ::toupper);
  std::string out = fmt::format("{:<4} {}{}: {}\n", sev, f.id,
                                f.host.empty() ? "" : fmt::format(" [{}]", f.host), f.summary);
  for (const auto& e : f.evidence) out += fmt::format("       evidence: {}\n", e);
  if (!f.fix.empty()) out += fmt::format("       fix: {}\n", f.fix);
  return out;
}

}  // namespace rdmacheck
