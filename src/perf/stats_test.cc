#include "perf/stats.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

TEST(LatStats, PercentilesAndSpread) {
  std::vector<double> v;
  for (int i = 1000; i >= 1; --i) v.push_back(i);  // 1..1000, shuffled order irrelevant
  const LatStats s = lat_stats(v);
  EXPECT_EQ(s.n, 1000u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 1000);
  EXPECT_DOUBLE_EQ(s.median, 500.5);
  EXPECT_DOUBLE_EQ(s.mean, 500.5);
  EXPECT_DOUBLE_EQ(s.p99, 990);
  EXPECT_DOUBLE_EQ(s.p999, 999);
  EXPECT_NEAR(s.stdev, 288.675, 1e-3);
}

TEST(LatStats, OneOutlierShowsInTheTailOnly) {
  std::vector<double> v(999, 2.0);
  v.push_back(400);
  const LatStats s = lat_stats(v);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.p99, 2);
  EXPECT_DOUBLE_EQ(s.p999, 2);
  EXPECT_DOUBLE_EQ(s.max, 400);
  EXPECT_NEAR(s.mean, 2.398, 1e-9);
}

TEST(LatStats, EmptyIsZero) { EXPECT_EQ(lat_stats({}).n, 0u); }

TEST(Histogram, TenRoundBucketsADecadeCoverEverySample) {
  const auto h = histogram({21.0, 24.9, 25.0, 47.0, 130.0});
  // [20,25) [25,30) [30,40) [40,50) [50,60) [60,80) [80,100) [100,120) [120,150)
  ASSERT_EQ(h.size(), 9u);
  EXPECT_DOUBLE_EQ(h[0].lo_us, 20);
  EXPECT_DOUBLE_EQ(h[0].hi_us, 25);
  EXPECT_EQ(h[0].count, 2u);
  EXPECT_EQ(h[1].count, 1u);  // 25 itself opens the next bucket
  EXPECT_EQ(h[2].count, 0u);  // inner empty buckets stay
  EXPECT_EQ(h[3].count, 1u);
  EXPECT_DOUBLE_EQ(h[6].lo_us, 80);
  EXPECT_DOUBLE_EQ(h[6].hi_us, 100);
  EXPECT_DOUBLE_EQ(h[8].lo_us, 120);
  EXPECT_DOUBLE_EQ(h[8].hi_us, 150);
  EXPECT_EQ(h[8].count, 1u);
}

TEST(Histogram, BelowAMicrosecondTheEdgesRepeatTenTimesSmaller) {
  const auto h = histogram({0.95, 1.0});
  ASSERT_EQ(h.size(), 2u);
  EXPECT_DOUBLE_EQ(h[0].lo_us, 0.8);
  EXPECT_DOUBLE_EQ(h[0].hi_us, 1);
  EXPECT_EQ(h[0].count, 1u);
  EXPECT_EQ(h[1].count, 1u);
  EXPECT_TRUE(histogram({}).empty());
}

TEST(Rates, UnitsAreDecimalBitsAndBinaryBytes) {
  EXPECT_DOUBLE_EQ(gbps(125'000'000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(mib_per_s(1u << 20, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(mpps(3'000'000, 2.0), 1.5);
  EXPECT_DOUBLE_EQ(gbps(1000, 0), 0);
}

TEST(PeakRate, BestWindowNotTheAverage) {
  // 100 msgs/s for 1 s, then 400 msgs/s for 0.5 s.
  std::vector<Progress> p = {{0, 0}, {0.5, 50}, {1.0, 100}, {1.25, 200}, {1.5, 300}};
  EXPECT_DOUBLE_EQ(peak_rate(p, 0.5), 400);
  EXPECT_DOUBLE_EQ(peak_rate(p, 1.5), 200);
  EXPECT_DOUBLE_EQ(peak_rate(p, 2.0), 0);
}

TEST(IntervalRates, EachIntervalItsOwnRate) {
  // From 0.5 s (warm-up over) to 2.5 s: 100, 100, 300, 100 msgs/s by half second.
  std::vector<Progress> p = {{0.5, 1000},  {0.75, 1025}, {1.0, 1050},  {1.25, 1075}, {1.5, 1100},
                             {1.75, 1175}, {2.0, 1250},  {2.25, 1275}, {2.5, 1300}};
  EXPECT_EQ(interval_rates(p, 4), (std::vector<double>{100, 100, 300, 100}));
  const auto s = spread_of(interval_rates(p, 4));
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.min, 100);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_DOUBLE_EQ(s.p99, 300);
}

TEST(IntervalRates, SparsePointsGiveFewerIntervals) {
  // Three points for ten intervals: the two spans between them are all there is.
  std::vector<Progress> p = {{0, 0}, {0.5, 50}, {1.0, 100}};
  EXPECT_EQ(interval_rates(p, 10), (std::vector<double>{100, 100}));
  EXPECT_TRUE(interval_rates({{0, 0}}, 10).empty());
  EXPECT_TRUE(interval_rates({{1, 0}, {1, 5}}, 10).empty());
}

// Points every 10 ms; nothing completes from 1.00 s to 3.50 s, then it resumes.
TEST(LongestStall, TheLongestRunOfPointsWithOneCount) {
  std::vector<Progress> p;
  uint64_t msgs = 0;
  for (int ms = 0; ms <= 5000; ms += 10) {
    if (ms <= 1000 || ms > 3500) msgs += 5;
    p.push_back({ms / 1000.0, msgs});
  }
  const Stall s = longest_stall(p);
  EXPECT_NEAR(s.from, 1.0, 1e-9);
  EXPECT_NEAR(s.seconds, 2.5, 1e-9);
  EXPECT_TRUE(s.resumed);
  // A run that ends stalled: not resumed.
  p.resize(300);  // up to 2.99 s
  const Stall end = longest_stall(p);
  EXPECT_NEAR(end.seconds, 1.99, 1e-9);
  EXPECT_FALSE(end.resumed);
  // Steady traffic: no stall longer than a sample.
  std::vector<Progress> steady;
  for (int i = 0; i < 100; ++i) steady.push_back({i * 0.001, static_cast<uint64_t>(i)});
  EXPECT_EQ(longest_stall(steady).seconds, 0);
  EXPECT_EQ(longest_stall({}).seconds, 0);
  EXPECT_EQ(longest_stall({{0, 0}}).seconds, 0);
}

}  // namespace
}  // namespace rdmacheck::perf
