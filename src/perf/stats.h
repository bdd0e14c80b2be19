// The arithmetic of a performance run, pure: latency statistics and
// histograms, and bandwidth in Gb/s, MiB/s and Mpps (with the peak over
// windows of the run).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace rdmacheck::perf {

struct LatStats {
  uint64_t n = 0;
  double min = 0, median = 0, mean = 0, p99 = 0, p999 = 0, max = 0, stdev = 0;  // microseconds
};
// Nearest-rank percentiles; stdev is the population standard deviation.
LatStats lat_stats(std::vector<double> samples_us);
// The same order statistics over any other samples (a run's interval
// bandwidths), in their unit. Over 100 samples or fewer, p99 is the largest.
inline LatStats spread_of(std::vector<double> samples) { return lat_stats(std::move(samples)); }

struct Bucket {
  double lo_us = 0;  // [lo, hi)
  double hi_us = 0;
  uint64_t count = 0;
};
// Log-linear buckets, ten a decade on round edges (1, 1.2, 1.5, 2, 2.5, 3,
// 4, 5, 6, 8 times a power of ten), from the smallest sample's bucket to the
// largest's; empty ones in between are kept.
std::vector<Bucket> histogram(const std::vector<double>& samples_us);

// 1 Gb/s = 1e9 bit/s; 1 MiB/s = 2^20 byte/s; 1 Mpps = 1e6 messages/s.
double gbps(uint64_t bytes, double seconds);
double mib_per_s(uint64_t bytes, double seconds);
double mpps(uint64_t msgs, double seconds);

// A point on the run's progress: seconds since start, messages completed so far.
struct Progress {
  double t = 0;
  uint64_t msgs = 0;
};
// The highest message rate (msgs/s) over any span of at least min_window
// seconds between two progress points; 0 when no span is long enough.
double peak_rate(const std::vector<Progress>& points, double min_window);

// The rate (msgs/s) of each of N equal intervals from the first point to
// the last (points sorted by t): each interval ends at the first point at or
// past its boundary, so points every millisecond time a 200 ms interval to
// within 0.5 %. Fewer than N rates when the points are sparser than the
// intervals; none for fewer than two points or no time between them.
std::vector<double> interval_rates(const std::vector<Progress>& points, int n);

// The longest span in which no message completed: from the first point with
// a count to the last point with the same count (points come every
// millisecond, completions or not). Zero for fewer than two points.
struct Stall {
  double from = 0;       // seconds since start
  double seconds = 0;    // its length
  bool resumed = false;  // messages completed after it
};
Stall longest_stall(const std::vector<Progress>& points);

}  // namespace rdmacheck::perf
