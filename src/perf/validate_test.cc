#include "perf/validate.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace rdmacheck::perf {
namespace {

TEST(Validate, PatternRoundTripsAndNamesTheFirstWrongByte) {
  std::vector<char> buf(4096);
  fill_pattern(buf.data(), buf.size(), 7, Side::kClient, 2);
  EXPECT_EQ(check_pattern(buf.data(), buf.size(), 7, Side::kClient, 2), std::nullopt);
  buf[17] = static_cast<char>(buf[17] ^ 0x40);
  const auto why = check_pattern(buf.data(), buf.size(), 7, Side::kClient, 2);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("byte 17 of 4096"), std::string::npos) << *why;
}

TEST(Validate, LeftoversZerosAndTheOtherSideNeverPass) {
  std::vector<char> buf(256);
  fill_pattern(buf.data(), buf.size(), 7, Side::kClient, 1);
  // The previous step's data, the other direction's, another session's.
  EXPECT_TRUE(check_pattern(buf.data(), buf.size(), 7, Side::kClient, 2));
  EXPECT_TRUE(check_pattern(buf.data(), buf.size(), 7, Side::kServer, 1));
  EXPECT_TRUE(check_pattern(buf.data(), buf.size(), 8, Side::kClient, 1));
  std::vector<char> zeros(256, 0);
  EXPECT_TRUE(check_pattern(zeros.data(), zeros.size(), 7, Side::kClient, 1));
  // Every byte differs between neighbouring steps, not just some.
  for (uint64_t i = 0; i < 256; ++i) {
    EXPECT_NE(pattern_byte(7, Side::kClient, 1, i), pattern_byte(7, Side::kClient, 2, i)) << i;
  }
}

TEST(Validate, PlansFollowWhoPushesAndWhoFetches) {
  // Unidirectional write: the client's data lands at the server.
  auto c = data_plan(Op::kWrite, Kind::kBw, Transport::kRc, true, false);
  auto s = data_plan(Op::kWrite, Kind::kBw, Transport::kRc, false, true);
  EXPECT_TRUE(c.fills_send);
  EXPECT_FALSE(c.checks_recv);
  EXPECT_FALSE(s.fills_send);
  EXPECT_TRUE(s.checks_recv);
  // Read: the server's receive half is the source, the client checks what it fetched.
  c = data_plan(Op::kRead, Kind::kBw, Transport::kRc, true, false);
  s = data_plan(Op::kRead, Kind::kBw, Transport::kRc, false, true);
  EXPECT_TRUE(c.checks_fetch);
  EXPECT_FALSE(c.fills_recv);
  EXPECT_TRUE(s.fills_recv);
  // Send latency is a ping-pong: both push, both check; UD data follows the GRH.
  c = data_plan(Op::kSend, Kind::kLat, Transport::kUd, true, false);
  EXPECT_TRUE(c.fills_send && c.checks_recv);
  EXPECT_EQ(c.recv_offset, 40u);
  EXPECT_TRUE(data_plan(Op::kWrite, Kind::kLat, Transport::kRc, true, false).last_byte_stamped);
  // Atomics: the target side counts.
  EXPECT_TRUE(data_plan(Op::kAtomicFadd, Kind::kBw, Transport::kRc, false, true).checks_counter);
  EXPECT_FALSE(data_plan(Op::kAtomicFadd, Kind::kBw, Transport::kRc, true, false).checks_counter);
}

TEST(Validate, CounterInEitherByteOrder) {
  uint64_t v = 300;
  char b[8];
  std::memcpy(b, &v, 8);
  EXPECT_EQ(check_counter(b, 300), std::nullopt);
  v = __builtin_bswap64(uint64_t{300});
  std::memcpy(b, &v, 8);
  EXPECT_EQ(check_counter(b, 300), std::nullopt);
  EXPECT_TRUE(check_counter(b, 299));
}

TEST(Validate, FindingNamesTheWrongBytesOrSaysHowManyPassed) {
  EXPECT_EQ(validation_finding(0, {}), std::nullopt);
  const auto good = validation_finding(6, {});
  ASSERT_TRUE(good);
  EXPECT_EQ(good->id, FindingId::kDataValidated);
  EXPECT_EQ(good->severity, Severity::kInfo);
  const auto bad = validation_finding(6, {"server: data the client sent (4096 B): byte 3 ..."});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->id, FindingId::kDataValidationFailed);
  EXPECT_EQ(bad->severity, Severity::kFail);
  EXPECT_EQ(bad->evidence.size(), 1u);
  EXPECT_NE(bad->summary.find("1 of 6"), std::string::npos) << bad->summary;
}

}  // namespace
}  // namespace rdmacheck::perf
