#include "conn/traffic_cap.h"

#include <gtest/gtest.h>

namespace rdmacheck::conn {
namespace {

using namespace std::chrono_literals;

TEST(TrafficCap, ParsesBytesPerSeconds) {
  auto c = parse_traffic_cap("64G/120s");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bytes, 64ull << 30);
  EXPECT_EQ(c->seconds, 120s);
  c = parse_traffic_cap("500M/1m");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bytes, 500ull << 20);
  EXPECT_EQ(c->seconds, 60s);
  EXPECT_EQ(parse_traffic_cap("4096/1h")->bytes, 4096u);
  for (const char* bad :
       {"", "64G", "64G/", "/10s", "0/10s", "1G/0s", "1X/1s", "1G/2d", "-1G/1s", "1G/2days"}) {
    auto r = parse_traffic_cap(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("is not BYTES/SECONDS"), std::string::npos) << bad;
  }
}

TEST(TrafficCap, ASessionStopsAtItsBytes) {
  TrafficPool pool({1000ull << 20, 60s});
  SessionTraffic a(pool);
  EXPECT_FALSE(a.charge(600ull << 20));
  EXPECT_FALSE(a.charge(400ull << 20));
  const auto why = a.charge(1);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "this server sends at most 1000 MiB per session (--max-rate)");
  EXPECT_EQ(a.sent(), 1000ull << 20);
}

TEST(TrafficCap, AllSessionsShareThePoolWhichRefillsAtTheRate) {
  TrafficPool pool({1000, 10s});
  const auto t0 = Clock::now();
  EXPECT_TRUE(pool.take(700, t0));
  EXPECT_TRUE(pool.take(700, t0));  // the last one may overdraw once
  EXPECT_FALSE(pool.take(1, t0));
  // 100 bytes a second: after 3 s the 400-byte debt is paid off, after 4 s 100 are there.
  EXPECT_FALSE(pool.take(1, t0 + 3s));
  EXPECT_TRUE(pool.take(100, t0 + 4s + 10ms));
}

TEST(TrafficCap, ASecondSessionIsRefusedOnceThePoolIsSpent) {
  TrafficPool pool({1ull << 30, 60s});
  SessionTraffic a(pool);
  SessionTraffic b(pool);
  a.account(1ull << 31);  // a timed -b step sent more than the pool held
  const auto why = b.may_send(1);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "this server's traffic for all sessions (1024 MiB per 60 s) is spent for now "
            "(--max-rate)");
}

}  // namespace
}  // namespace rdmacheck::conn
