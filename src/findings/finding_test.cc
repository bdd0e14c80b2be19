#include "findings/finding.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

TEST(Findings, ExitStatusFollowsTheWorstSeverity) {
  Finding info{FindingId::kDataValidated, Severity::kInfo};
  Finding warn{FindingId::kMtuMismatch, Severity::kWarn};
  Finding fail{FindingId::kPortDown, Severity::kFail};
  EXPECT_EQ(exit_status(std::vector<Finding>{}), 0);
  EXPECT_EQ(exit_status({info}), 0);
  EXPECT_EQ(exit_status({info, warn}), 1);
  EXPECT_EQ(exit_status({warn, fail, info}), 2);
  const auto j = to_json(fail);
  EXPECT_EQ(j["severity"], "fail");
  EXPECT_EQ(j["id"], "port-down");
  EXPECT_EQ(format_finding(fail).rfind("FAIL port-down: ", 0), 0u);
}

// Every printed finding points at its catalogue entry; a peer's id this
// build does not know is printed, and written, as it came.
TEST(Findings, TextEndsWithTheExplainCommand) {
  Finding f = make_finding(FindingId::kMtuBlackHole, Severity::kFail, Layer::kConnection,
                           "messages up to 1024 bytes pass, 4096 bytes fail");
  f.evidence = {"netdev MTU 9000 here, 1500 on h2"};
  f.fix = "set the same MTU";
  EXPECT_EQ(format_finding(f),
            "FAIL mtu-black-hole: messages up to 1024 bytes pass, 4096 bytes fail\n"
            "       evidence: netdev MTU 9000 here, 1500 on h2\n"
            "       fix: set the same MTU\n"
            "       (rdmacheck explain mtu-black-hole)\n");
  Finding peer;
  set_id_from_wire(peer, "nic-on-fire");
  peer.severity = Severity::kWarn;
  peer.summary = "from a newer peer";
  EXPECT_EQ(format_finding(peer), "WARN nic-on-fire: from a newer peer\n");
  EXPECT_EQ(to_json(peer)["id"], "nic-on-fire");
}

TEST(Findings, SameIdComparesForeignIdsByName) {
  Finding a;
  Finding b;
  set_id_from_wire(a, "nic-on-fire");
  set_id_from_wire(b, "nic-melted");
  EXPECT_FALSE(same_id(a, b));
  set_id_from_wire(b, "nic-on-fire");
  EXPECT_TRUE(same_id(a, b));
  set_id_from_wire(b, "port-down");
  EXPECT_TRUE(b.is(FindingId::kPortDown));
  EXPECT_TRUE(b.foreign_id.empty());
  EXPECT_FALSE(same_id(a, b));
  EXPECT_TRUE(b.is_any({FindingId::kPortNotActive, FindingId::kPortDown}));
}

// The JSON form and back (peers' reports, the mesh's ranks, perf's text):
// every key to_json writes comes back; a missing key or an unknown severity
// is an error, an unknown id is carried as foreign.
TEST(Findings, JsonRoundTripsAndRefusesWhatToJsonNeverWrites) {
  Finding f = make_finding(FindingId::kPortDown, Severity::kFail, Layer::kDevice, "rxe0/1 is DOWN");
  f.evidence = {"state: 1: DOWN"};
  f.fix = "ip link set eth0 up";
  f.host = "h2";
  f.subject = "rxe0/1";
  auto back = finding_from_json(to_json(f));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(to_json(*back), to_json(f));
  auto j = to_json(f);
  j["id"] = "nic-on-fire";
  auto foreign = finding_from_json(j);
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(id_name(*foreign), "nic-on-fire");
  j["severity"] = "catastrophic";
  EXPECT_FALSE(finding_from_json(j).ok());
  auto no_summary = to_json(f);
  no_summary.erase("summary");
  EXPECT_FALSE(finding_from_json(no_summary).ok());
  EXPECT_FALSE(finding_from_json(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace rdmacheck
