#include "conn/ping.h"

#include <gtest/gtest.h>

namespace rdmacheck::conn {
namespace {

TEST(Ping, RttStatistics) {
  const auto s = rtt_stats({5, 1, 3, 2, 4}, 6);
  EXPECT_EQ(s.sent, 6);
  EXPECT_EQ(s.received, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.avg, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p99, 5);
  EXPECT_DOUBLE_EQ(rtt_stats({1, 2, 3, 4}, 4).median, 2.5);
  EXPECT_EQ(rtt_stats({}, 3).received, 0);
}

TEST(Ping, NearestRankP99) {
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(rtt_stats(v, 200).p99, 198);
}

TEST(Ping, LadderCrossesTheMtu) {
  EXPECT_EQ(ladder_sizes(1024, false), (std::vector<uint32_t>{64, 256, 512, 1024, 2048, 8192}));
  EXPECT_EQ(ladder_sizes(4096, true), (std::vector<uint32_t>{64, 256, 2048, 4096}));
}

}  // namespace
}  // namespace rdmacheck::conn
