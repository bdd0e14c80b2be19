// The teaching examples (examples/rc_pingpong.cc on raw libibverbs and
// examples/rc_pingpong_raii.cc on the verbs/ core) between h1 (server) and h2
// (client) on the real stack; then, in the same boot, the raw one under the
// firewall fault beside what `rdmacheck check` says about it.
// docs/learn-verbs.md quotes what these runs print.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

constexpr const char* kIters = "20";

std::string text(const nlohmann::json& out) {
  return out.is_string() ? out.get<std::string>() : "";
}

// h1: the example's server, its output also in a file that h2 polls for the
// "listening" line (a bounded wait: 30 s); pipefail keeps the server's status.
std::string server(const std::string& bin, const std::string& port, const std::string& log) {
  return "h1:set -o pipefail; " + bin + " -p " + port + " 2>&1 | tee /run/lab/h1/" + log;
}
// h2: waits for that line, runs the client and prints how long it took.
std::string client(const std::string& bin, const std::string& port, const std::string& log) {
  return "h2:for i in $(seq 300); do grep -q listening /run/lab/h1/" + log +
         " 2>/dev/null && break; sleep 0.1; done; t0=$(date +%s%N); " + bin + " 198.18.0.1 -p " +
         port + " -n " + kIters +
         " 2>&1; rc=$?; echo \"elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))\"; exit $rc";
}

long elapsed_ms(const std::string& out) {
  const auto at = out.find("elapsed_ms=");
  return at == std::string::npos ? -1 : std::stol(out.substr(at + 11));
}

// Both ping-pongs between two healthy guests.
void expect_healthy(const LabRun& lab, const Boot::Part& part) {
  const std::string c = text(part.out(lab, "h2")), s = text(part.out(lab, "h1"));
  EXPECT_EQ(part.exit(lab, "h2"), 0) << c << lab.console;
  EXPECT_EQ(part.exit(lab, "h1"), 0) << s;
  EXPECT_NE(c.find(std::string(kIters) + " round trips of 64 bytes: min "), std::string::npos) << c;
  EXPECT_NE(c.find("\nPASS\n"), std::string::npos) << c;
  EXPECT_NE(s.find(std::string("answered ") + kIters + " round trips\nPASS"), std::string::npos)
      << s;
}

// The raw symptom and rdmacheck's name for it: with UDP 4791 dropped on h1,
// TCP still carries the QP facts, both QPs reach RTS, and the client's first
// send ends (in bounded time, not a hang) with status 12 by name; the check
// in the same boot puts firewall-blocks-roce first.
void expect_firewalled(const LabRun& r, const Boot::Part& pp) {
  const std::string c = text(pp.out(r, "h2")), s = text(pp.out(r, "h1", 1));
  std::fprintf(stderr, "rc_pingpong under the firewall (h2):\n%s(h1):\n%s", c.c_str(), s.c_str());
  EXPECT_EQ(pp.exit(r, "h1", 0), 0) << text(pp.out(r, "h1", 0));  // the rule went in
  EXPECT_EQ(pp.exit(r, "h2"), 1) << c << r.console;
  EXPECT_NE(c.find("rc_pingpong: FAIL: round trip 1: send completion: transport retry counter "
                   "exceeded (status 12)"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("remote QPN"), std::string::npos) << "the TCP exchange worked: " << c;
  // (1 + 6 retries) x 67 ms is about 0.5 s; a loaded emulator stretches it.
  EXPECT_GE(elapsed_ms(c), 0) << c;
  EXPECT_LT(elapsed_ms(c), 20000) << c;
  // The server waited its bounded 5 s for a ping that never came.
  EXPECT_EQ(pp.exit(r, "h1", 1), 1) << s;
  EXPECT_NE(s.find("no completion within 5 s"), std::string::npos) << s;
}

void expect_check_names_firewall(const LabRun& r, const Boot::Part& check) {
  const auto& doc = check.out(r, "h2");
  ASSERT_TRUE(doc.is_object()) << r.console;
  ASSERT_FALSE(doc["top_findings"].empty()) << doc.dump(2).substr(0, 2000);
  EXPECT_EQ(doc["top_findings"][0]["id"], "firewall-blocks-roce");
  std::fprintf(stderr, "rdmacheck check h1 (h2): top finding %s: %s\n",
               doc["top_findings"][0]["id"].dump().c_str(),
               doc["top_findings"][0].value("summary", "").c_str());
  EXPECT_EQ(check.exit(r, "h2"), 2);
}

// One boot: both examples on the healthy pair; then h1 drops UDP 4791 (what
// `--fault firewall` does) and runs the raw example's server again, and h2
// runs its client and `rdmacheck check` against the firewalled h1.
TEST(ExamplesLab, BothPassThenUnderTheFirewallTheExampleNamesStatus12AndCheckTheFirewall) {
  Boot boot;
  const auto raw = boot.add(
      {server(LAB_RC_PINGPONG, "18515", "pp.log"), client(LAB_RC_PINGPONG, "18515", "pp.log")});
  const auto raii = boot.add({server(LAB_RC_PINGPONG_RAII, "18516", "ppr.log"),
                              client(LAB_RC_PINGPONG_RAII, "18516", "ppr.log")});
  // h1's runs follow one another: the rule goes in once both healthy servers
  // are done, before the firewalled server starts (whose line h2 waits for).
  const auto fw = boot.add({"h1:iptables -I INPUT -p udp --dport 4791 -j DROP",
                            server(LAB_RC_PINGPONG, "18517", "ppf.log"),
                            client(LAB_RC_PINGPONG, "18517", "ppf.log")});
  const auto check = boot.add({"h2:rdmacheck check h1 --json"});
  const auto r = run_lab(boot.args());
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  expect_parts(r, {{"rc_pingpong", raw, expect_healthy},
                   {"rc_pingpong_raii", raii, expect_healthy},
                   {"rc_pingpong under the firewall", fw, expect_firewalled},
                   {"check under the firewall", check, expect_check_names_firewall}});
}

}  // namespace
}  // namespace rdmacheck::labtest
