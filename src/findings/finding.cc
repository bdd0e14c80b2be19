#include "findings/finding.h"

#include <fmt/core.h>

#include <algorithm>
#include <ostream>

namespace rdmacheck {

std::ostream& operator<<(std::ostream& os, FindingId id) { return os << name_of(id); }

std::string_view id_name(const Finding& f) {
  return f.id == FindingId::kForeign ? std::string_view(f.foreign_id) : name_of(f.id);
}

bool same_id(const Finding& a, const Finding& b) {
  return a.id == b.id && (a.id != FindingId::kForeign || a.foreign_id == b.foreign_id);
}

void set_id_from_wire(Finding& f, std::string name) {
  if (auto id = parse_enum<FindingId>(name)) {
    f.id = *id;
    f.foreign_id.clear();
  } else {
    f.id = FindingId::kForeign;
    f.foreign_id = std::move(name);
  }
}

Finding make_finding(FindingId id, Severity severity, Layer layer, std::string summary) {
  Finding f;
  f.id = id;
  f.severity = severity;
  f.layer = layer;
  f.summary = std::move(summary);
  return f;
}

nlohmann::json to_json(const Finding& f) {
  nlohmann::json j = {{"id", id_name(f)},
                      {"severity", severity_name(f.severity)},
                      {"layer", layer_name(f.layer)},
                      {"summary", f.summary},
                      {"evidence", f.evidence},
                      {"fix", f.fix}};
  if (!f.host.empty()) j["host"] = f.host;
  if (!f.subject.empty()) j["subject"] = f.subject;
  return j;
}

// The inverse of to_json(Finding): every key to_json always writes must be
// there, with a known severity and layer; an id this build does not know is
// carried as foreign.
Result<Finding> finding_from_json(const nlohmann::json& j) {
  try {
    Finding f;
    set_id_from_wire(f, j.at("id").get<std::string>());
    auto sev = parse_enum<Severity>(j.at("severity").get<std::string>());
    auto layer = parse_enum<Layer>(j.at("layer").get<std::string>());
    if (!sev || !layer)
      return plain_error("finding",
                         "finding " + std::string(id_name(f)) + ": unknown severity or layer");
    f.severity = *sev;
    f.layer = *layer;
    f.summary = j.at("summary").get<std::string>();
    f.evidence = j.at("evidence").get<std::vector<std::string>>();
    f.fix = j.at("fix").get<std::string>();
    f.host = j.value("host", "");
    f.subject = j.value("subject", "");
    return f;
  } catch (const nlohmann::json::exception& e) {
    return plain_error("finding", e.what());
  }
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

bool has_finding(const std::vector<Finding>& fs, FindingId id) {
  return std::any_of(fs.begin(), fs.end(), [id](const Finding& f) { return f.id == id; });
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
  std::string out = fmt::format("{:<4} {}{}: {}\n", sev, id_name(f),
                                f.host.empty() ? "" : fmt::format(" [{}]", f.host), f.summary);
  for (const auto& e : f.evidence) out += fmt::format("       evidence: {}\n", e);
  if (!f.fix.empty()) out += fmt::format("       fix: {}\n", f.fix);
  // Where its catalogue entry is; a peer's id this build does not know has none.
  if (f.id != FindingId::kForeign)
    out += fmt::format("       (rdmacheck explain {})\n", name_of(f.id));
  return out;
}

}  // namespace rdmacheck
