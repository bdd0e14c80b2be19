#include "mesh/schedule.h"

namespace rdmacheck::mesh {

namespace {
// Hosts in the circle: a phantom joins an odd number of hosts.
int circle(int hosts) { return hosts % 2 == 0 ? hosts : hosts + 1; }
}  // namespace

int round_count(int hosts) { return hosts < 2 ? 0 : circle(hosts) - 1; }

int partner(int hosts, int round, int host) {
  if (hosts < 2 || host < 0 || host >= hosts || round < 0 || round >= round_count(hosts)) {
    return kBye;
  }
  // The circle method: the last position stays put, the others rotate. With
  // m = circle - 1 (odd), positions i and j meet in round r when
  // i + j = 2r (mod m); the one position with i = r meets the fixed one.
  const int fixed = circle(hosts) - 1;
  const int m = fixed;
  int other = 0;
  if (host == fixed) {
    other = round;
  } else if (host == round) {
    other = fixed;
  } else {
    other = ((2 * round - host) % m + m) % m;
  }
  return other >= hosts ? kBye : other;  // the phantom: a bye
}

std::vector<Pair> round_pairs(int hosts, int round) {
  std::vector<Pair> pairs;
  for (int h = 0; h < hosts; ++h) {
    const int p = partner(hosts, round, h);
    if (p > h) pairs.push_back(Pair{h, p});
  }
  return pairs;
}

}  // namespace rdmacheck::mesh
