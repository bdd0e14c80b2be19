#include "findings/finding.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

TEST(Findings, ExitStatusFollowsTheWorstSeverity) {
  Finding info{FindingId::kDataValidated, Severity::kInfo};
  Finding warn{FindingId::kMtuMismatch, Severity::kWarn};
  Finding fail{FindingId::kPortDown, Severity::kFail};
  EXPECT_EQ(exit_status({}), 0);
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

}  // namespace
}  // namespace rdmacheck
