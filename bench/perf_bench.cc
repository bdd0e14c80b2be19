// The engine's pure pieces that run per sample or per completion batch:
// statistics over a run's latencies, the histogram, the peak-rate window.
#include <benchmark/benchmark.h>

#include <random>

#include "perf/stats.h"

namespace {

std::vector<double> samples(size_t n) {
  std::mt19937 rng(42);
  std::lognormal_distribution<double> d(1.0, 0.3);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void BM_LatStats(benchmark::State& st) {
  const auto v = samples(static_cast<size_t>(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(rdmacheck::perf::lat_stats(v));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_LatStats)->Arg(1000)->Arg(100000);

void BM_Histogram(benchmark::State& st) {
  const auto v = samples(static_cast<size_t>(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(rdmacheck::perf::histogram(v));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_Histogram)->Arg(1000)->Arg(100000);

void BM_PeakRate(benchmark::State& st) {
  std::vector<rdmacheck::perf::Progress> p;
  for (int64_t i = 0; i < st.range(0); ++i) {
    p.push_back({static_cast<double>(i) * 1e-3, static_cast<uint64_t>(i * 100 + (i % 7) * 3)});
  }
  for (auto _ : st) benchmark::DoNotOptimize(rdmacheck::perf::peak_rate(p, 0.1));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_PeakRate)->Arg(3000);

}  // namespace
