#include "perf/verdict.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

LinkFacts cx5() {
  LinkFacts l;
  l.device = "mlx5_0";
  l.driver = "mlx5_core";
  l.port_gbps = 100;
  l.netdev_gbps = 100;
  l.pcie_gbps = pcie_usable_gbps(8, 16);
  l.mtu = 4096;
  return l;
}

TEST(Verdict, EfficiencyGrowsWithSizeAndMtu) {
  EXPECT_LT(payload_efficiency(64, 1024, true), 0.5);
  EXPECT_NEAR(payload_efficiency(1 << 20, 4096, true), 4096.0 / (4096 + 82), 1e-3);
  EXPECT_GT(payload_efficiency(1 << 20, 4096, true), payload_efficiency(1 << 20, 1024, true));
  EXPECT_GT(payload_efficiency(1 << 20, 4096, false), payload_efficiency(1 << 20, 4096, true));
}

TEST(Verdict, NarrowPcieSlotLimitsTheExpectation) {
  // The field notes: Gen3 x8 is about 64 Gb/s, below 100 GbE.
  LinkFacts l = cx5();
  l.pcie_gbps = pcie_usable_gbps(8, 8);
  const auto e = expected_bw(l, 1 << 20);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->limited_by, "PCIe");
  EXPECT_NEAR(e->line_gbps, 56.7, 0.1);
  EXPECT_EQ(expected_bw(cx5(), 1 << 20)->limited_by, "port");
}

TEST(Verdict, HealthyHundredGigIsQuietHalfIsAFailure) {
  BwSample good{1 << 20, 1000, 1, 92, 94, 0, 0};
  EXPECT_TRUE(verdict_findings(Spec{}, cx5(), {good}, {}).empty());
  BwSample half{1 << 20, 1000, 1, 45, 46, 0, 0};
  const auto f = verdict_findings(Spec{}, cx5(), {half}, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kBandwidthBelowExpected);
  EXPECT_EQ(f[0].severity, Severity::kFail);
}

TEST(Verdict, SlowSmallMessagesAreNamed) {
  LatSample ok;
  ok.size = 2;
  ok.stats.median = 2.5;
  EXPECT_TRUE(verdict_findings(Spec{}, cx5(), {}, {ok}).empty());
  LatSample slow = ok;
  slow.stats.median = 30;
  const auto f = verdict_findings(Spec{}, cx5(), {}, {slow});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kLatencyAboveExpected);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
}

TEST(Verdict, SoftwareDevicesGetAnHonestInfo) {
  LinkFacts l = cx5();
  l.driver = "rxe";
  l.device = "rxe0";
  BwSample slow{65536, 10, 1, 0.1, 0.1, 0, 0};
  const auto f = verdict_findings(Spec{}, l, {slow}, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kNoLineRateReference);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_FALSE(expected_bw(l, 65536));
}

}  // namespace
}  // namespace rdmacheck::perf
