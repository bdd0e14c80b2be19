// --cpu-util: the CPU time the calling thread uses over a stretch of wall
// time. Busy polling shows as ~100 %; a side that sleeps on its completion
// channel (the server's receive sink) shows far less.
#pragma once

#include <time.h>

#include <chrono>

namespace rdmacheck::perf {

class CpuClock {
 public:
  CpuClock() : cpu0_(thread_cpu()), wall0_(std::chrono::steady_clock::now()) {}
  [[nodiscard]] double cpu_s() const { return thread_cpu() - cpu0_; }
  [[nodiscard]] double wall_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  }

 private:
  static double thread_cpu() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  double cpu0_;
  std::chrono::steady_clock::time_point wall0_;
};

// CPU time as a share of wall time, in percent (0 when no time passed).
inline double cpu_percent(double cpu_s, double wall_s) {
  return wall_s > 0 ? 100.0 * cpu_s / wall_s : 0;
}

}  // namespace rdmacheck::perf
