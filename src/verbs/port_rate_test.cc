// Link rates from ibv_query_port(3)'s width and speed codes, against the
// rates the kernel's sysfs "rate" file prints for the same ports
// (drivers/infiniband/core/sysfs.c rate_show: "100 Gb/sec (4X EDR)").
#include "verbs/port_rate.h"

#include <gtest/gtest.h>

namespace rdmacheck::verbs {
namespace {

double rate(uint8_t width, uint32_t speed) {
  ibv_port_attr a{};
  a.active_width = width;
  a.active_speed = static_cast<uint8_t>(speed);
  return port_rate_gbps(a);
}

TEST(PortRate, WidthTimesSpeedAsSysfsPrintsThem) {
  EXPECT_DOUBLE_EQ(rate(2, 32), 100);    // 4X EDR
  EXPECT_DOUBLE_EQ(rate(2, 64), 200);    // 4X HDR
  EXPECT_DOUBLE_EQ(rate(2, 16), 56);     // 4X FDR
  EXPECT_DOUBLE_EQ(rate(2, 8), 40);      // 4X FDR10
  EXPECT_DOUBLE_EQ(rate(16, 128), 200);  // 2X NDR
  EXPECT_DOUBLE_EQ(rate(1, 1), 2.5);     // 1X SDR
  EXPECT_DOUBLE_EQ(rate(8, 4), 120);     // 12X QDR
  EXPECT_DOUBLE_EQ(rate(4, 2), 40);      // 8X DDR
}

TEST(PortRate, ACodeTheManPageDoesNotListIsNoRate) {
  EXPECT_DOUBLE_EQ(rate(3, 32), 0);  // no such width
  EXPECT_DOUBLE_EQ(rate(2, 3), 0);   // no such speed
  EXPECT_DOUBLE_EQ(rate(0, 0), 0);   // a port that reports neither
}

}  // namespace
}  // namespace rdmacheck::verbs
