#include "monitor/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace rdmacheck::monitor {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> hosts(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 1; i <= n; ++i) v.push_back("h" + std::to_string(i));
  return v;
}

// A fake fleet: every probe takes LATENCY (or never answers, for the peers
// in DEAD, until TIMEOUT); the clock advances in 10 ms steps. Records every
// start, and the most probes in flight and started in any one second.
struct Run {
  std::map<std::string, std::vector<Clock::time_point>> starts;
  size_t max_in_flight = 0;
  size_t max_per_second = 0;
};

Run simulate(Scheduler& s, Clock::time_point t0, Clock::duration length,
             Clock::duration latency = 5ms, const std::set<std::string>& dead = {},
             Clock::duration timeout = 2s) {
  Run r;
  std::multimap<Clock::time_point, std::string> ends;
  std::deque<Clock::time_point> recent;  // starts in the last second
  for (auto now = t0; now < t0 + length; now += 10ms) {
    while (!ends.empty() && ends.begin()->first <= now) {
      s.done(ends.begin()->second, now);
      ends.erase(ends.begin());
    }
    for (const auto& p : s.due(now)) {
      r.starts[p].push_back(now);
      recent.push_back(now);
      ends.emplace(now + (dead.count(p) != 0 ? timeout : latency), p);
    }
    while (!recent.empty() && recent.front() <= now - 1s) recent.pop_front();
    r.max_per_second = std::max(r.max_per_second, recent.size());
    r.max_in_flight = std::max(r.max_in_flight, s.in_flight());
  }
  return r;
}

TEST(Scheduler, EveryPeerOncePerIntervalSpreadAndJittered) {
  const auto t0 = Clock::time_point{} + 1000s;
  ScheduleOptions o;
  o.interval = 10s;
  Scheduler s(hosts(10), o, t0);
  EXPECT_EQ(s.period(), 10s) << "10 peers fit in one interval";
  const auto r = simulate(s, t0, 100s);
  ASSERT_EQ(r.starts.size(), 10u);
  for (const auto& [peer, starts] : r.starts) {
    EXPECT_GE(starts.size(), 9u) << peer;
    EXPECT_LE(starts.size(), 12u) << peer;
    for (size_t k = 1; k < starts.size(); ++k) {
      const auto gap = starts[k] - starts[k - 1];
      EXPECT_GE(gap, 9s - 10ms) << peer << ": jitter within ±10 %";
      EXPECT_LE(gap, 11s + 10ms) << peer;
    }
  }
  // The first round is spread over the interval, not a burst at t0.
  std::vector<Clock::time_point> first;
  for (const auto& [peer, starts] : r.starts) first.push_back(starts.front());
  std::sort(first.begin(), first.end());
  EXPECT_GE(first.back() - first.front(), 8s);
  for (size_t k = 2; k < first.size(); ++k) {
    EXPECT_GE(first[k] - first[k - 2], 1s) << "three first probes within one second";
  }
}

// A fleet of 1,000: the in-flight and rate bounds hold, each peer's period
// stretches so that at most 64 distinct peers are probed per interval, and
// every peer is still probed within one stretched period.
TEST(Scheduler, AThousandPeersStayWithinEveryBound) {
  const auto t0 = Clock::time_point{} + 1000s;
  ScheduleOptions o;
  o.interval = 10s;
  o.max_in_flight = 8;
  o.max_probes_per_s = 20;
  o.max_peers_per_interval = 64;
  Scheduler s(hosts(1000), o, t0);
  EXPECT_EQ(s.period(), 156250ms) << "1000 / 64 intervals of 10 s";
  // Some peers never answer: their timeouts hold in-flight slots.
  const auto r = simulate(s, t0, 400s, 50ms, {"h7", "h70", "h700"}, 3s);
  EXPECT_LE(r.max_in_flight, 8u);
  EXPECT_LE(r.max_per_second, 20u);
  EXPECT_EQ(r.starts.size(), 1000u) << "every peer probed within the run";
  for (const auto& [peer, starts] : r.starts) {
    EXPECT_LE(starts.front() - t0, 157s) << peer << " waited more than one period";
    EXPECT_LE(starts.size(), 4u) << peer;
  }
  EXPECT_GE(r.starts.at("h7").size(), 2u) << "a dead peer is probed again, on its own schedule";
}

TEST(Scheduler, TheRateBoundDelaysButDropsNoPeer) {
  const auto t0 = Clock::time_point{} + 1000s;
  ScheduleOptions o;
  o.interval = 1s;
  o.max_probes_per_s = 5;
  o.max_peers_per_interval = 100;
  Scheduler s(hosts(20), o, t0);  // 20 probes a second asked, 5 allowed
  const auto r = simulate(s, t0, 20s);
  EXPECT_LE(r.max_per_second, 5u);
  EXPECT_EQ(r.starts.size(), 20u);
  size_t least = SIZE_MAX;
  size_t most = 0;
  for (const auto& [peer, starts] : r.starts) {
    least = std::min(least, starts.size());
    most = std::max(most, starts.size());
  }
  EXPECT_LE(most - least, 2u) << "the most overdue goes first: every peer alike";
  EXPECT_GT(s.next_wakeup(), Clock::time_point{});
}

TEST(Scheduler, ANewPeerListKeepsTheScheduleOfThePeersThatStay) {
  const auto t0 = Clock::time_point{} + 1000s;
  ScheduleOptions o;
  o.interval = 10s;
  Scheduler s({"h1", "h2", "h3", "h2"}, o, t0);
  EXPECT_EQ(s.peers().size(), 3u) << "a peer listed twice is probed once";
  auto r = simulate(s, t0, 15s);
  const auto h1_last = r.starts.at("h1").back();
  s.set_peers({"h1", "h4"}, t0 + 15s);
  EXPECT_EQ(s.peers(), (std::vector<std::string>{"h1", "h4"}));
  s.done("h3", t0 + 15s);  // a removed peer's late answer is ignored
  EXPECT_EQ(s.in_flight(), 0u);
  r = simulate(s, t0 + 15s, 20s);
  EXPECT_EQ(r.starts.count("h3"), 0u);
  ASSERT_TRUE(r.starts.count("h4"));
  ASSERT_TRUE(r.starts.count("h1"));
  EXPECT_GE(r.starts.at("h1").front() - h1_last, 9s) << "h1 kept its period across the reload";
}

}  // namespace
}  // namespace rdmacheck::monitor
