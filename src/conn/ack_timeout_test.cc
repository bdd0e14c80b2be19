#include "conn/ack_timeout.h"

#include <gtest/gtest.h>

namespace rdmacheck::conn {
namespace {

TEST(AckTimeout, ExponentCoversTheTimeWithAFloor) {
  EXPECT_EQ(ack_timeout_exponent(0), kMinAckTimeout);
  EXPECT_EQ(ack_timeout_exponent(5), kMinAckTimeout);  // a rack: the floor
  // 2^16 x 4.096 us = 268 ms; one microsecond more needs the next step.
  EXPECT_EQ(ack_timeout_exponent(268435.456), 16);
  EXPECT_EQ(ack_timeout_exponent(268436), 17);
  EXPECT_EQ(ack_timeout_exponent(1e12), 31);
}

TEST(AckTimeout, FollowsTheRoundTripAsTcpDoesItsRto) {
  // srtt 100 ms + 4 x 50 ms = 300 ms: above the floor, 2^17 = 537 ms.
  const auto a = choose_ack_timeout(PathRtt{100000, 50000, 0}, std::nullopt);
  EXPECT_EQ(a.exponent, 17);
  EXPECT_FALSE(a.from_user);
  EXPECT_NEAR(a.timeout_ms(), 536.9, 0.1);
  EXPECT_EQ(describe(a), "537 ms (2^17 x 4.096 us) from the TCP round trip 100.0 ms +- 50.0 ms");
  // A fast path gets the floor, not 67 ms: a busy host must not look lossy.
  EXPECT_EQ(choose_ack_timeout(PathRtt{3000, 1500, 0}, std::nullopt).exponent, kMinAckTimeout);
  EXPECT_EQ(choose_ack_timeout(std::nullopt, std::nullopt).exponent, kMinAckTimeout);
}

TEST(AckTimeout, SoftwareRdmaHasAHigherFloor) {
  const auto a = choose_ack_timeout(PathRtt{3000, 1500, 0}, std::nullopt, true);
  EXPECT_EQ(a.exponent, kMinAckTimeoutSoftware);
  EXPECT_EQ(describe(a),
            "1074 ms (2^18 x 4.096 us) from the TCP round trip 3.0 ms +- 1.5 ms (software RDMA "
            "floor)");
  EXPECT_EQ(to_json(a)["software_floor"], true);
  // The user's value stays the user's, software or not.
  EXPECT_EQ(choose_ack_timeout(std::nullopt, uint8_t{14}, true).exponent, 14);
  EXPECT_EQ(software_rdma(nullptr), false);
}

TEST(AckTimeout, TheUsersChoiceWins) {
  const auto a = choose_ack_timeout(PathRtt{100000, 50000, 0}, uint8_t{12});
  EXPECT_EQ(a.exponent, 12);
  EXPECT_TRUE(a.from_user);
  EXPECT_EQ(describe(a), "17 ms (2^12 x 4.096 us) set by --ack-timeout");
  EXPECT_EQ(to_json(a)["source"], "user");
  EXPECT_EQ(to_json(choose_ack_timeout(std::nullopt, std::nullopt))["source"], "floor");
}

}  // namespace
}  // namespace rdmacheck::conn
