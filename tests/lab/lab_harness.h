// Runs `rdmacheck lab --json ...` and hands its JSON document to the test.
#pragma once

#include <initializer_list>
#include <map>
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

// Several tests' runs in one boot. A boot costs 15-30 s of emulation before
// anything runs, and a test that needs only a healthy pair does not need a
// pair of its own. Each part adds its runs and reads back its own outputs by
// its own indices (0-based, per host); parts never read each other's.
class Boot {
 public:
  struct Part {
    std::map<std::string, size_t> first;  // per host: the boot's index of this part's run 0
    const nlohmann::json& out(const LabRun& r, const std::string& host, size_t n = 0) const;
    int exit(const LabRun& r, const std::string& host, size_t n = 0) const;
  };
  // Adds "hN:command" runs, in order; each host runs its own in that order.
  Part add(const std::vector<std::string>& runs);
  // The boot's index the next run added on `host` gets (its rc file in the
  // guest is /run/lab/HOST/rc.<index + 1>).
  size_t next(const std::string& host) const;
  // `extra` (e.g. "--hosts", "3"), then "--run" and each run added.
  std::vector<std::string> args(std::vector<std::string> extra = {}) const;

 private:
  std::vector<std::string> runs_;
  std::map<std::string, size_t> count_;
};

// Each part's checks in turn, each under its name in a failure's trace.
struct PartCheck {
  const char* what;
  const Boot::Part& part;
  void (*expect)(const LabRun&, const Boot::Part&);
};
void expect_parts(const LabRun& r, std::initializer_list<PartCheck> checks);

// The ids of a findings array, in order.
std::vector<std::string> finding_ids(const nlohmann::json& findings);

// What a guest printed, held to schemas/SCHEMA (e.g. "doctor.schema.json"),
// plus what every printed document carries (schema_version, the ticket,
// exit_status):
// each violation as "path: reason"; empty when it conforms.
std::vector<std::string> printed_violations(const nlohmann::json& doc, const std::string& schema);

}  // namespace rdmacheck::labtest
