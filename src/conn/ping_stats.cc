// What a ping's numbers become: its round-trip statistics and the sizes of
// its MTU ladder. Pure; tested in ping_test.cc.
#include <algorithm>
#include <cmath>

#include "conn/ping.h"

namespace rdmacheck::conn {

RttStats rtt_stats(std::vector<double> rtts, int sent) {
  RttStats s;
  s.sent = sent;
  s.received = static_cast<int>(rtts.size());
  if (rtts.empty()) return s;
  std::sort(rtts.begin(), rtts.end());
  s.min = rtts.front();
  s.max = rtts.back();
  double sum = 0;
  for (double r : rtts) sum += r;
  s.avg = sum / static_cast<double>(rtts.size());
  const size_t n = rtts.size();
  s.median = n % 2 == 1 ? rtts[n / 2] : (rtts[n / 2 - 1] + rtts[n / 2]) / 2;
  // Nearest-rank percentile.
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99 = rtts[std::clamp<size_t>(rank, 1, n) - 1];
  return s;
}

std::vector<uint32_t> ladder_sizes(int mtu, bool ud) {
  if (mtu <= 0) mtu = 1024;
  const auto m = static_cast<uint32_t>(mtu);
  std::vector<uint32_t> sizes = {64, 256, m / 2, m};
  if (!ud) {
    sizes.push_back(2 * m);
    sizes.push_back(8 * m);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace rdmacheck::conn
