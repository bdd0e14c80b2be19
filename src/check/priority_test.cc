#include "check/priority.h"

#include <gtest/gtest.h>

#include "check/check.h"
#include "check/report.h"
#include "doctor/doctor.h"
#include "doctor/test_fixture.h"

namespace rdmacheck::check {
namespace {

using doctor::testing::Fixture;

PriorityChoice choice_for(const std::string& fixture) {
  const Fixture fx(fixture);
  const auto report = doctor::run_doctor(fx.fs(), fx.src());
  return priority_from_doctor(doctor::to_json(report), port_under_test(port_states(report), "", 0));
}

// mlx5-gen3x8 (tests/fixtures/README.md): PFC on priority 3, DSCP trusted,
// DSCP 26 -> priority 3 in its APP table: the check marks DSCP 26 (with ECT).
TEST(Priority, DscpTrustUsesTheDscpThatMapsToThePfcPriority) {
  const auto c = choice_for("mlx5-gen3x8");
  EXPECT_EQ(c.source, PrioritySource::kDoctor);
  EXPECT_EQ(c.traffic_class, 106);
  EXPECT_EQ(c.sl, 0);
  EXPECT_EQ(c.why,
            "PFC on priority 3 of ens1f0np0, trust dscp, DSCP 26 -> priority 3: traffic "
            "class 106");
  EXPECT_EQ(to_json(c)["source"], "doctor");
}

// mlx4-degraded: PFC off on both ports: class 0, said so.
TEST(Priority, NoPfcKeepsClassZeroAndSaysWhy) {
  const auto c = choice_for("mlx4-degraded");
  EXPECT_EQ(c.source, PrioritySource::kDefault);
  EXPECT_EQ(c.traffic_class, 0);
  EXPECT_EQ(c.sl, 0);
  EXPECT_EQ(c.why, "no priority has PFC on enp129s0: class 0, level 0");
}

// The lab's Soft-RoCE capture: virtio has no DCB.
TEST(Priority, UnreadablePfcKeepsClassZero) {
  const auto c = choice_for("rxe-lab-doctor-healthy");
  EXPECT_EQ(c.source, PrioritySource::kDefault);
  EXPECT_EQ(c.traffic_class, 0);
  EXPECT_EQ(c.why, "PFC on eth0 is not readable: class 0, level 0");
}

TEST(Priority, PcpTrustUsesTheServiceLevel) {
  const nlohmann::json doc = {
      {"checks",
       {{{"check", "netdev"}, {"subject", "mlx5_0/1"}, {"facts", {{"netdev", "eth2"}}}},
        {{"check", "lossless"},
         {"subject", "eth2"},
         {"facts", {{"pfc_priorities", {3}}, {"trust", "pcp"}}}}}}};
  const auto c = priority_from_doctor(doc, "mlx5_0/1");
  EXPECT_EQ(c.source, PrioritySource::kDoctor);
  EXPECT_EQ(c.traffic_class, 0);
  EXPECT_EQ(c.sl, 3);
}

// check reports what it used and why, in text and JSON.
TEST(Priority, TheCheckReportSaysWhatItUsedAndWhy) {
  CheckReport r;
  r.layers = {LayerReport{Layer::kDevice, LayerStatus::kPass},
              LayerReport{Layer::kConnection, LayerStatus::kPass},
              LayerReport{Layer::kPerformance, LayerStatus::kPass}};
  r.priority = choice_for("mlx5-gen3x8");
  const std::string text = format_text(r);
  EXPECT_NE(text.find("  priority: traffic class 106, service level 0 (doctor: PFC on priority 3 "
                      "of ens1f0np0, trust dscp, DSCP 26 -> priority 3: traffic class 106)\n"),
            std::string::npos)
      << text;
  const auto j = to_json(r)["priority"];
  EXPECT_EQ(j["traffic_class"], 106);
  EXPECT_EQ(j["source"], "doctor");
}

TEST(Priority, DscpChoice) {
  const nlohmann::json map = {{"0", 0}, {"24", 3}, {"26", 3}, {"48", 6}};
  EXPECT_EQ(dscp_for_priority(map, 3), 26);
  EXPECT_EQ(dscp_for_priority({{"30", 3}, {"25", 3}}, 3), 25);
  EXPECT_EQ(dscp_for_priority(map, 5), -1);
  EXPECT_EQ(dscp_for_priority(nlohmann::json(), 3), -1);
}

}  // namespace
}  // namespace rdmacheck::check
