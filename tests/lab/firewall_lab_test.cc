// The first pitfall of the field guide, UDP 4791 dropped on the server (h1),
// met by every command in one boot: check fails its connection layer naming
// the firewall first, ping and the rdma_cm ping end bounded and name it,
// and doctor on h1 names the rule, and a capture of h1 replays to the same
// findings. One boot: the fault is the same for all of them, and each
// command's expectations are the part of its own test that they were.
#include <gtest/gtest.h>

#include <algorithm>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

// The matrix's firewall-server row (diagnosis.quick leaves it to this part).
void expect_check(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 2);
  const auto& c = part.out(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(printed_violations(c, "check.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(c["layers"][1]["status"], "fail");
  EXPECT_EQ(c["layers"][2]["status"], "not_run");
  const auto ids = finding_ids(c["layers"][1]["findings"]);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], "firewall-blocks-roce");
  EXPECT_EQ(c["top_findings"][0]["id"], "firewall-blocks-roce");
}

void expect_ping(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 2);
  const auto& ping = part.out(r, "h2");
  ASSERT_TRUE(ping.is_object()) << r.console;
  EXPECT_EQ(ping["ok"], false);
  EXPECT_EQ(ping["failed_stage"], "traffic");
  EXPECT_NE(ping["error"].get<std::string>().find("retry counter exceeded"), std::string::npos);
  EXPECT_LE(ping["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
  const auto ids = finding_ids(ping["findings"]);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], "firewall-blocks-roce");
  EXPECT_NE(ping["findings"][0]["evidence"][0].get<std::string>().find("--dport 4791 -j DROP"),
            std::string::npos);
}

// --cm under the firewall: the connect request gets no answer.
void expect_cm_ping(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h2"), 2);
  const auto& p = part.out(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["failed_stage"], "cm connect");
  EXPECT_LE(p["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
  const auto ids = finding_ids(p["findings"]);
  ASSERT_FALSE(ids.empty()) << p.dump(2);
  EXPECT_EQ(ids[0], "firewall-blocks-roce");
}

void expect_doctor(const LabRun& r, const Boot::Part& part) {
  EXPECT_EQ(part.exit(r, "h1"), 2);
  const auto& live = part.out(r, "h1");
  ASSERT_TRUE(live.is_object()) << r.console;
  const auto ids = finding_ids(live["findings"]);
  ASSERT_EQ(std::count(ids.begin(), ids.end(), "firewall-blocks-roce"), 1) << live.dump(2);
  for (const auto& f : live["findings"]) {
    if (f["id"] != "firewall-blocks-roce") continue;
    EXPECT_EQ(f["severity"], "fail");
    EXPECT_EQ(f["layer"], "connection");
    ASSERT_FALSE(f["evidence"].empty());
    EXPECT_EQ(f["evidence"][0], "iptables -A INPUT -p udp -m udp --dport 4791 -j DROP");
  }
  EXPECT_EQ(live["summary"]["fail"], 1);
  const auto& replay = part.out(r, "h1", 1);
  ASSERT_TRUE(replay.is_object()) << r.console;
  EXPECT_EQ(printed_violations(live, "doctor.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(printed_violations(replay, "doctor.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(replay["host"]["root"], "/tmp/cap");
  EXPECT_EQ(finding_ids(replay["findings"]), ids);
  EXPECT_EQ(replay["summary"], live["summary"]);
}

TEST(FirewallLab, CheckPingRdmaCmAndDoctorEachNameTheFirewallOnTheServer) {
  Boot b;
  const auto check = b.add({"h2:rdmacheck check h1 --json"});
  const auto ping = b.add({"h2:rdmacheck ping h1 --json"});
  const auto cm = b.add({"h2:rdmacheck ping h1 --cm --json"});
  const auto doctor = b.add({"h1:rdmacheck doctor --json",
                             "h1:rdmacheck doctor --capture /tmp/cap > /dev/null; "
                             "rdmacheck doctor --root /tmp/cap --json"});
  const auto r = run_lab(b.args({"--fault", "firewall"}));
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  EXPECT_EQ(r.exit, 2) << r.console;
  expect_parts(r, {{"check", check, expect_check},
                   {"ping", ping, expect_ping},
                   {"ping --cm", cm, expect_cm_ping},
                   {"doctor and its capture", doctor, expect_doctor}});
}

}  // namespace
}  // namespace rdmacheck::labtest
