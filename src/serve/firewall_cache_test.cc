#include "serve/firewall_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace rdmacheck::serve {
namespace {

using namespace std::chrono_literals;

std::atomic<int> g_reads{0};

std::vector<std::string> one_rule(std::chrono::milliseconds) {
  ++g_reads;
  return {"iptables -A INPUT -p udp --dport 4791 -j DROP"};
}

// A stream of failed tests reads the firewall once per interval; a read
// that is older than that is made again.
TEST(FirewallCache, FailedTestsShareOneReadPerInterval) {
  g_reads = 0;
  FirewallCache cache(one_rule);
  const auto t0 = Clock::now();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(cache.rules(t0 + i * 10ms).size(), 1u);
  }
  EXPECT_EQ(g_reads.load(), 1);
  EXPECT_EQ(cache.rules(t0 + FirewallCache::kFresh + 1s).front(),
            "iptables -A INPUT -p udp --dport 4791 -j DROP");
  EXPECT_EQ(g_reads.load(), 2);
  EXPECT_EQ(cache.text(t0 + FirewallCache::kFresh + 2s),
            "iptables -A INPUT -p udp --dport 4791 -j DROP");
  EXPECT_EQ(cache.reads(), 2);
}

// Sessions that fail at the same moment wait for one read and share it.
TEST(FirewallCache, SessionsFailingAtOnceShareOneRead) {
  g_reads = 0;
  FirewallCache cache(one_rule);
  const auto t0 = Clock::now();
  std::vector<std::thread> sessions;
  for (int i = 0; i < 8; ++i) sessions.emplace_back([&] { (void)cache.rules(t0); });
  for (auto& t : sessions) t.join();
  EXPECT_EQ(g_reads.load(), 1);
}

}  // namespace
}  // namespace rdmacheck::serve
