#include "conn/loss.h"

#include <gtest/gtest.h>

namespace rdmacheck::conn {
namespace {

TEST(Loss, WilsonTellsZeroAFewAndAllApart) {
  // 100/100: loss below 3.7 %; 97/100: 1-8.5 %; 0/100: above 96 %.
  EXPECT_NEAR(wilson(100, 100).low, 0.963, 0.001);
  EXPECT_DOUBLE_EQ(wilson(100, 100).high, 1.0);
  EXPECT_NEAR(wilson(97, 100).low, 0.915, 0.001);
  EXPECT_NEAR(wilson(97, 100).high, 0.990, 0.001);
  EXPECT_NEAR(wilson(0, 100).high, 0.037, 0.001);
  EXPECT_DOUBLE_EQ(wilson(0, 0).low, 0);
  EXPECT_DOUBLE_EQ(wilson(0, 0).high, 1);
}

TEST(Loss, TalliesPerTransportAndSize) {
  std::vector<ProbeTally> t;
  for (int i = 0; i < 100; ++i) count_probe(t, "ud", 64, i % 33 != 0);
  count_probe(t, "ud", 1024, true);
  count_probe(t, "rc", 64, true, true);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].sent, 100);
  EXPECT_EQ(t[0].answered, 96);
  EXPECT_EQ(t[2].slow, 1);
  EXPECT_EQ(describe(t[0]), "UD 64 B: 96/100 answered, loss 4.0 % (95 % interval 1.6-9.8 %)");
  EXPECT_EQ(to_json(t)[0]["answered"], 96);
}

TEST(Loss, AFewLostDatagramsWarnAndNeverFail) {
  std::vector<ProbeTally> t;
  for (int i = 0; i < 30; ++i) count_probe(t, "rc", 64, true);
  for (int i = 0; i < 100; ++i) count_probe(t, "ud", 64, i >= 3);
  const auto fs = loss_findings(t, "h1");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, FindingId::kRoceLoss);
  EXPECT_EQ(fs[0].severity, Severity::kWarn);
  EXPECT_NE(fs[0].summary.find("3 of 130 probes"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].summary.find("gets through"), std::string::npos);
}

TEST(Loss, NothingLostNothingSaid) {
  std::vector<ProbeTally> t;
  for (int i = 0; i < 100; ++i) count_probe(t, "ud", 64, true);
  EXPECT_TRUE(loss_findings(t, "h1").empty());
  // A size class with no answer at all is a dead path: diagnose() names it, not this.
  count_probe(t, "ud", 1024, false);
  EXPECT_TRUE(loss_findings(t, "h1").empty());
}

TEST(Loss, RcRetransmissionsAloneWarn) {
  std::vector<ProbeTally> t;
  for (int i = 0; i < 30; ++i) count_probe(t, "rc", 64, true, i == 5);
  const auto fs = loss_findings(t, "h1");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].summary.find("retransmissions"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::conn
