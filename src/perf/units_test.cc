#include "perf/units.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

TEST(Units, RateTakesTheLargestUnitItReachesOneIn) {
  EXPECT_EQ(rate_text(12.3), "12.3 Mpps");
  EXPECT_EQ(rate_text(1.5), "1.50 Mpps");
  EXPECT_EQ(rate_text(0.5), "500 kpps");
  EXPECT_EQ(rate_text(0.004), "4.00 kpps");
  EXPECT_EQ(rate_text(0.0153), "15.3 kpps");
  // The healthy check's 64 KiB writes in the lab: 0.106 Gb/s is 202 messages a second.
  EXPECT_EQ(rate_text(0.000202), "202 pps");
  EXPECT_EQ(rate_text(0.0000005), "0.500 pps");
  EXPECT_EQ(rate_text(0.0), "0 pps");
}

TEST(Units, RateChoosesOnTheRoundedFigure) {
  EXPECT_EQ(rate_text(0.9996), "1.00 Mpps");  // not "1000 kpps"
  EXPECT_EQ(rate_text(0.00099999), "1.00 kpps");
  EXPECT_EQ(rate_text(148.8), "149 Mpps");
}

TEST(Units, SignificantKeepsThreeDigits) {
  EXPECT_EQ(significant(5.2431), "5.24");
  EXPECT_EQ(significant(52.431), "52.4");
  EXPECT_EQ(significant(524.31), "524");
  EXPECT_EQ(significant(1600.4), "1600");
  EXPECT_EQ(significant(0.014021), "0.0140");
  EXPECT_EQ(significant(9.996), "10.0");
  EXPECT_EQ(significant(0), "0");
  EXPECT_EQ(significant(-1), "0");
}

TEST(Units, BandwidthStaysInGbps) {
  EXPECT_EQ(gbps_text(94.123), "94.1 Gb/s");
  EXPECT_EQ(gbps_text(5.2431), "5.24 Gb/s");
  EXPECT_EQ(gbps_text(0.106), "0.106 Gb/s");
  EXPECT_EQ(gbps_text(0.0001144), "0.000114 Gb/s");
  EXPECT_EQ(gbps_text(0), "0 Gb/s");
}

}  // namespace
}  // namespace rdmacheck::perf
