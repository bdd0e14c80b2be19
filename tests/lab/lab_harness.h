// Runs `rdmacheck lab --json ...` and hands its JSON document to the test.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmacheck::labtest {

struct LabRun {
  int exit = -1;        // rdmacheck lab's exit status
  double seconds = 0;   // wall time of the whole lab
  nlohmann::json doc;   // the lab's JSON document (null when it printed none)
  std::string console;  // the guests' consoles (stderr), for failure messages
};

// args are appended to `rdmacheck lab --json`; each is one shell-quoted argument.
// env, when given, prefixes the command ("PATH=/nonexistent").
LabRun run_lab(const std::vector<std::string>& args, const std::string& env = "");

// The output of HOST's run number N (0-based), parsed as JSON when it was JSON.
const nlohmann::json& run_output(const LabRun& r, const std::string& host, size_t n = 0);
int run_exit(const LabRun& r, const std::string& host, size_t n = 0);

// The ids of a findings array, in order.
std::vector<std::string> finding_ids(const nlohmann::json& findings);

// What a guest printed, held to schemas/SCHEMA (e.g. "doctor.schema.json"),
// plus what every printed document carries (schema_version, the ticket):
// each violation as "path: reason"; empty when it conforms.
std::vector<std::string> printed_violations(const nlohmann::json& doc, const std::string& schema);

}  // namespace rdmacheck::labtest
