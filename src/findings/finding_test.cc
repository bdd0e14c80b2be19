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
