// The mesh's round-robin "circle" schedule: every pair of N hosts meets
// exactly once, every host is in at most one pair per round, and all pairs of
// a round run at once. N even: N-1 rounds. N odd: a phantom host makes it
// even and whoever meets it sits the round out (a bye), so N rounds: with an
// odd N at most (N-1)/2 pairs fit in a round, N(N-1)/2 pairs need N rounds.
// Pure and O(1) per host and round, so 16,384 hosts cost nothing to plan.
#pragma once

#include <vector>

namespace rdmacheck::mesh {

constexpr int kBye = -1;

// How many rounds N hosts need (0 for fewer than two hosts).
int round_count(int hosts);

// The host that HOST (0-based) meets in ROUND (0-based), or kBye.
int partner(int hosts, int round, int host);

struct Pair {
  int a = 0;  // a < b
  int b = 0;
};
// Every pair of ROUND, lower host first, in order of a.
std::vector<Pair> round_pairs(int hosts, int round);

}  // namespace rdmacheck::mesh
