#include "lab/lab_harness.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "lab/wire.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace rdmacheck::labtest {
namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Says in the test's output (ctest keeps it in Testing/Temporary/LastTest.log,
// passed or not) how long the hub saw each guest stalled, so a whole lab-label
// run can be read for stalls afterwards (grep 'lab-harness: ').
void note_stalls(const LabRun& r) {
  if (!r.doc.is_object() || !r.doc.contains("wire") || !r.doc.at("wire").is_array()) return;
  std::string worst;
  double longest = -1;
  for (const auto& w : r.doc.at("wire")) {
    const double s = w["hub_stall"]["seconds"].get<double>();
    if (s > longest) {
      longest = s;
      worst = w["host"].get<std::string>();
    }
  }
  if (longest < 0) return;
  std::printf("lab-harness: longest guest stall %.2f s (%s)%s\n", longest, worst.c_str(),
              longest >= lab::kGuestStallS ? ": STALL, the lab's, not rdmacheck's" : "");
  std::fflush(stdout);
}

// The lab's own lines (its wire counters per guest, a stall or mute, a
// deadline), at the head of the test's output: a failure's excerpt, which
// keeps a test's first lines, then shows what the wire did, however long
// the console that follows.
void note_lab_lines(const LabRun& r) {
  std::istringstream in(r.console);
  std::string line;
  while (std::getline(in, line)) {
    const bool own = line.rfind("lab: ", 0) == 0 || line.rfind("rdmacheck lab: ", 0) == 0;
    if (own && line.find(" booted in ") == std::string::npos) {
      std::printf("lab-harness| %s\n", line.c_str());
    }
  }
  std::fflush(stdout);
}

// The first port the lab says it failed itself on ("tx-stall on h1"), or "".
std::string lab_fault(const LabRun& r) {
  // value() and contains(): operator[] on a const document with a key it
  // lacks is undefined (a lab that failed early has no wire report).
  if (!r.doc.is_object() || !r.doc.contains("wire") || !r.doc.at("wire").is_array()) return "";
  for (const auto& w : r.doc.at("wire")) {
    if (w.is_object() && w.contains("lab_fault") && w.at("lab_fault").is_string()) {
      const int wire = w.value("wire", 1);
      return w.at("lab_fault").get<std::string>() + " on " + w.value("host", std::string("?")) +
             (wire == 1 ? "" : "-" + std::to_string(wire));
    }
  }
  return "";
}

LabRun run_once(const std::vector<std::string>& args, const std::string& env) {
  const std::string err = "/tmp/rdmacheck-labtest-" + std::to_string(::getpid()) + ".err";
  std::string cmd =
      (env.empty() ? "" : "env " + env + " ") + std::string(RDMACHECK_BIN) + " lab --json";
  for (const auto& a : args) {
    cmd += ' ';
    cmd += quote(a);
  }
  cmd += " 2>";
  cmd += err;
  LabRun r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = ::pclose(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.doc = nlohmann::json::parse(out, nullptr, false);
  if (r.doc.is_discarded()) r.doc = nullptr;
  std::ifstream e(err);
  std::stringstream ss;
  ss << e.rdbuf();
  r.console = ss.str();
  ::unlink(err.c_str());
  note_stalls(r);
  note_lab_lines(r);
  return r;
}

}  // namespace

// A lab that names a fault of its own (its guest stopped, or its emulated
// NIC stopped sending: lab::lab_fault) ran the test on a broken machine, not
// on the network under test: such a run is the emulator's, so it runs once
// more, and says so. A second lab fault in a row is kept (the test then
// fails on what it saw, with the lab's line in its console).
LabRun run_lab(const std::vector<std::string>& args, const std::string& env) {
  LabRun r = run_once(args, env);
  if (const auto fault = lab_fault(r); !fault.empty()) {
    std::printf("lab-harness: the lab's own fault (%s), not rdmacheck's: running it again\n",
                fault.c_str());
    std::fflush(stdout);
    r = run_once(args, env);
    r.console = "(a first run ended in the lab's own " + fault + ")\n" + r.console;
  }
  return r;
}

const nlohmann::json& run_output(const LabRun& r, const std::string& host, size_t n) {
  static const nlohmann::json null;
  if (!r.doc.is_object()) return null;
  for (const auto& h : r.doc["hosts"]) {
    if (h["name"] == host && h["runs"].size() > n) return h["runs"][n]["output"];
  }
  return null;
}

int run_exit(const LabRun& r, const std::string& host, size_t n) {
  if (!r.doc.is_object()) return -1;
  for (const auto& h : r.doc["hosts"]) {
    if (h["name"] == host && h["runs"].size() > n && h["runs"][n]["exit_status"].is_number()) {
      return h["runs"][n]["exit_status"].get<int>();
    }
  }
  return -1;
}

Boot::Part Boot::add(const std::vector<std::string>& runs) {
  Part p;
  for (const auto& line : runs) {
    const std::string host = line.substr(0, line.find(':'));
    p.first.emplace(host, count_[host]);  // only the first run on each host sets it
    ++count_[host];
    runs_.push_back(line);
  }
  return p;
}

size_t Boot::next(const std::string& host) const {
  const auto it = count_.find(host);
  return it == count_.end() ? 0 : it->second;
}

std::vector<std::string> Boot::args(std::vector<std::string> extra) const {
  for (const auto& line : runs_) {
    extra.emplace_back("--run");
    extra.push_back(line);
  }
  return extra;
}

const nlohmann::json& Boot::Part::out(const LabRun& r, const std::string& host, size_t n) const {
  static const nlohmann::json null;
  const auto it = first.find(host);
  return it == first.end() ? null : run_output(r, host, it->second + n);
}

int Boot::Part::exit(const LabRun& r, const std::string& host, size_t n) const {
  const auto it = first.find(host);
  return it == first.end() ? -1 : run_exit(r, host, it->second + n);
}

void expect_parts(const LabRun& r, std::initializer_list<PartCheck> checks) {
  for (const auto& c : checks) {
    SCOPED_TRACE(c.what);
    c.expect(r, c.part);
  }
}

std::vector<std::string> printed_violations(const nlohmann::json& doc, const std::string& schema) {
  const auto s = load_schema(RDMACHECK_SCHEMAS, schema);
  if (!s) return {s.error().message()};
  auto v = perf::schema_violations(*s, doc);
  for (const char* key : {"schema_version", "ticket", "exit_status"}) {
    if (!doc.is_object() || !doc.contains(key)) v.push_back(std::string("$: no ") + key);
  }
  return v;
}

std::vector<std::string> finding_ids(const nlohmann::json& findings) {
  std::vector<std::string> ids;
  if (!findings.is_array()) return ids;
  for (const auto& f : findings) ids.push_back(f.value("id", ""));
  return ids;
}

}  // namespace rdmacheck::labtest
