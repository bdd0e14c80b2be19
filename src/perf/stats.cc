#include "perf/stats.h"

#include <algorithm>
#include <cmath>

namespace rdmacheck::perf {
namespace {

double nearest_rank(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  return sorted[std::clamp<size_t>(rank, 1, n) - 1];
}

// Ten buckets a decade on round numbers, so that bars read as "20-25 us" and
// the runs of one report share their bucket edges.
constexpr double kDecade[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8};

// The lower edge of bucket i: bucket 0 starts at 1 us, bucket 10 at 10 us.
double bucket_lo(int i) {
  const int decade = i >= 0 ? i / 10 : -((-i + 9) / 10);
  return kDecade[i - decade * 10] * std::pow(10.0, decade);
}

// The bucket holding x (> 0), decided by the same edges bucket_lo gives.
int bucket_of(double x) {
  int i = 10 * static_cast<int>(std::floor(std::log10(x)));
  while (bucket_lo(i) > x) --i;
  while (bucket_lo(i + 1) <= x) ++i;
  return i;
}

}  // namespace

LatStats lat_stats(std::vector<double> v) {
  LatStats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(n);
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stdev = std::sqrt(sq / static_cast<double>(n));
  s.p99 = nearest_rank(v, 0.99);
  s.p999 = nearest_rank(v, 0.999);
  return s;
}

std::vector<Bucket> histogram(const std::vector<double>& samples) {
  std::vector<Bucket> out;
  if (samples.empty()) return out;
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  const int first = bucket_of(std::max(*mn, 1e-3));
  const int last = bucket_of(std::max(*mx, 1e-3));
  for (int i = first; i <= last; ++i) out.push_back(Bucket{bucket_lo(i), bucket_lo(i + 1), 0});
  for (double x : samples) ++out[static_cast<size_t>(bucket_of(std::max(x, 1e-3)) - first)].count;
  return out;
}

double gbps(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) * 8 / seconds / 1e9 : 0;
}

double mib_per_s(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / (1024.0 * 1024.0) : 0;
}

double mpps(uint64_t msgs, double seconds) {
  return seconds > 0 ? static_cast<double>(msgs) / seconds / 1e6 : 0;
}

double peak_rate(const std::vector<Progress>& p, double min_window) {
  double best = 0;
  size_t j = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    // The shortest span starting at j that still reaches min_window ends at i.
    while (j + 1 < i && p[i].t - p[j + 1].t >= min_window) ++j;
    const double span = p[i].t - p[j].t;
    if (i > j && span >= min_window && span > 0) {
      best = std::max(best, static_cast<double>(p[i].msgs - p[j].msgs) / span);
    }
  }
  return best;
}

std::vector<double> interval_rates(const std::vector<Progress>& p, int n) {
  std::vector<double> out;
  if (p.size() < 2 || n < 1 || p.back().t <= p.front().t) return out;
  const double from = p.front().t;
  const double step = (p.back().t - from) / n;
  size_t cut = 0, i = 0;
  for (int k = 1; k <= n; ++k) {
    // The last boundary is the last point itself, whatever rounding says.
    const double boundary = k == n ? p.back().t : from + k * step;
    while (i + 1 < p.size() && p[i].t < boundary) ++i;
    if (p[i].t <= p[cut].t) continue;  // no point since the last cut: sparser than the intervals
    out.push_back(static_cast<double>(p[i].msgs - p[cut].msgs) / (p[i].t - p[cut].t));
    cut = i;
  }
  return out;
}

Stall longest_stall(const std::vector<Progress>& p) {
  Stall best;
  size_t start = 0;  // the first point of a run of points with one count
  for (size_t i = 1; i <= p.size() && !p.empty(); ++i) {
    if (i < p.size() && p[i].msgs == p[start].msgs) continue;
    const double len = p[i - 1].t - p[start].t;
    if (len > best.seconds) best = Stall{p[start].t, len, i < p.size()};
    start = i;
  }
  return best;
}

}  // namespace rdmacheck::perf
