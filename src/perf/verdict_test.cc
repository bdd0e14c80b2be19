#include "perf/verdict.h"

#include <gtest/gtest.h>

#include <utility>

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

// Traffic that stopped for seconds and came back is named, on any device
// (software ones too: a flap is no CPU figure); shorter stalls, or a run
// that never resumed (its failure says why), are not.
TEST(Verdict, ATrafficStallThatResumedIsNamedWithWhenAndHowLong) {
  Spec s;
  BwSample b{65536, 1000, 20, 1, 1, 0, 0};
  b.stall = Stall{31.2, 5.3, true};
  auto f = stall_finding(s, {b}, {});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, FindingId::kTrafficStalled);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(f->summary,
            "traffic stopped for 5.3 s and then resumed: no write of 65536 B completed from "
            "31.2 s to 36.5 s into the test");
  EXPECT_NE(f->fix.find("went down and came back"), std::string::npos);
  EXPECT_NE(f->fix.find("a peer host that stopped"), std::string::npos);
  b.stall.seconds = kStallWarnS - 0.1;  // one or two ACK timeouts under loss
  EXPECT_FALSE(stall_finding(s, {b}, {}));
  b.stall = Stall{3, 9, false};
  EXPECT_FALSE(stall_finding(s, {b}, {})) << "never resumed: the run's own failure says why";
  // A latency test: one round trip of 4.2 s among 50 of about a millisecond.
  LatSample l;
  l.size = 64;
  l.stats.n = 50;
  l.stats.median = 500;  // us, half round trip
  l.stats.max = 2.1e6;   // half of 4.2 s
  auto lf = stall_finding(s, {}, {l});
  ASSERT_TRUE(lf);
  EXPECT_EQ(lf->summary,
            "traffic stopped for 4.2 s and then resumed: one write round trip of 64 B took that "
            "long, the median 1.000 ms");
  EXPECT_EQ(lf->evidence.back(), "64 B: the slowest of 50 round trips took 4.20 s");
  l.stats.max = 1.4e6;  // 2.8 s: under the bar
  EXPECT_FALSE(stall_finding(s, {}, {l}));
}

// A test that failed after seconds without a completion (lab
// FabricLab.AFlapMidTestEndsInBoundedTimeAndIsNamedAsAStall, when rxe's RC
// gave up before the flap's end let it recover): the stall is named with
// when it began, the failure is its evidence; a short silence before a
// failure is not a stall.
TEST(Verdict, AStallTheTestDidNotOutliveIsNamedWithTheFailure) {
  Spec s;
  const std::string error =
      "completion: transport retry counter exceeded (12) on rxe0 port 1 qpn 0x11 after 11173 "
      "messages";
  auto f = stall_before_failure_finding(s, 4096, Stall{6.1, 8.6, false}, error, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(std::make_pair(f->id, f->severity),
            std::make_pair(FindingId::kTrafficStalled, Severity::kWarn));
  EXPECT_EQ(f->summary,
            "traffic stopped 6.1 s into the 4096 B write and did not resume: the test failed "
            "8.6 s later");
  ASSERT_EQ(f->evidence.size(), 2u);
  EXPECT_EQ(f->evidence[1], error);
  EXPECT_NE(f->fix.find("went down and came back"), std::string::npos);
  EXPECT_NE(f->fix.find("the server's process ended mid-test"), std::string::npos);
  EXPECT_FALSE(
      stall_before_failure_finding(s, 4096, Stall{6.1, kStallWarnS - 0.1, false}, error, 0));
  // Matrix row switch-reorder-25: one 64 KiB write completed, then 6.6 s of
  // go-back-N under reordering (rcvd_seq_err +14, out_of_seq_request +17)
  // until the retries ran out. Packets flowed: loss, not an outage.
  EXPECT_FALSE(stall_before_failure_finding(s, 65536, Stall{0.0, 6.6, false}, error, 31));
}

}  // namespace
}  // namespace rdmacheck::perf
