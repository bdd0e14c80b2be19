#include "mesh/schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdmacheck::mesh {
namespace {

// Every pair exactly once, no host twice in a round, N-1 rounds (N with a bye
// each when N is odd). A spread of sizes up to 16,384 (not every N: the
// largest alone is 134 million pairs).
// The first broken rule of the schedule for N hosts, "" when there is none.
// Plain checks in the loop: gtest's macros would cost more than the schedule.
std::string schedule_problem(int n) {
  const int rounds = round_count(n);
  if (rounds != (n % 2 == 0 ? n - 1 : n)) return "rounds: " + std::to_string(rounds);
  // Pair (a, b), a < b, as bit a * n + b.
  std::vector<bool> met(static_cast<size_t>(n) * static_cast<size_t>(n), false);
  size_t pairs = 0;
  std::vector<int> byes(n, 0);
  for (int r = 0; r < rounds; ++r) {
    for (int h = 0; h < n; ++h) {
      const int p = partner(n, r, h);
      if (p == kBye) {
        ++byes[h];
        continue;
      }
      if (p == h || p < 0 || p >= n) return "bad partner " + std::to_string(p);
      if (h > p) continue;
      // Symmetric: the partner's partner is this host, so nobody is in two pairs.
      if (partner(n, r, p) != h) return "round " + std::to_string(r) + ": host in two pairs";
      auto bit = static_cast<size_t>(h) * n + p;
      if (met[bit]) return std::to_string(h) + "-" + std::to_string(p) + " met twice";
      met[bit] = true;
      ++pairs;
    }
  }
  if (pairs != static_cast<size_t>(n) * (n - 1) / 2) return "pairs: " + std::to_string(pairs);
  for (int h = 0; h < n; ++h) {
    if (byes[h] != n % 2) return "host " + std::to_string(h) + " byes: " + std::to_string(byes[h]);
  }
  return "";
}

// Every pair exactly once, no host twice in a round, N-1 rounds (N with one
// bye each when N is odd). A spread of sizes up to 16,384, not every N: the
// largest alone is 134 million pairs.
TEST(MeshSchedule, EveryPairOnceNoHostTwiceInARound) {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64, 101, 1000, 2001, 4095, 16384}) {
    EXPECT_EQ(schedule_problem(n), "") << n << " hosts";
  }
}

TEST(MeshSchedule, FewerThanTwoHostsHaveNoRounds) {
  EXPECT_EQ(round_count(0), 0);
  EXPECT_EQ(round_count(1), 0);
  EXPECT_EQ(partner(1, 0, 0), kBye);
}

TEST(MeshSchedule, RoundPairsListEachPairOnceLowerHostFirst) {
  auto pairs = round_pairs(4, 0);
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto& p : pairs) EXPECT_LT(p.a, p.b);
  auto odd = round_pairs(5, 2);
  EXPECT_EQ(odd.size(), 2u);  // one host has the bye
}

}  // namespace
}  // namespace rdmacheck::mesh
