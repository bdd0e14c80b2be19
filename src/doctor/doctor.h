// `rdmacheck doctor`: every host-side cause of a bad RDMA link, found and
// explained. run_doctor() measures (all checks, in table order); render()
// prints the same report as text grouped by layer, or as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "doctor/check.h"

namespace rdmacheck::doctor {

struct DoctorReport {
  std::string hostname;
  std::string kernel;
  std::string root;  // "/" live, else the replayed capture
  std::vector<CheckResult> checks;

  [[nodiscard]] std::vector<Finding> findings() const;
  [[nodiscard]] int exit_status() const { return rdmacheck::exit_status(findings()); }
};

struct CheckEntry {
  const char* name;
  std::vector<CheckResult> (*run)(const Machine& m);
};
// The checks in the order they run.
const std::vector<CheckEntry>& check_table();

DoctorReport run_doctor(const FsRoot& fs, Sources& src);

// The JSON document, and the text grouped by layer (each check's facts, then
// its findings), from one walk over the report.
nlohmann::json to_json(const DoctorReport& r);
std::string format_text(const DoctorReport& r, const TextStyle& style = {});

}  // namespace rdmacheck::doctor
