// What an RDMA port counter means, by the names rxe, mlx5 and the
// InfiniBand PortCounters use in sysfs (ports/N/hw_counters, ports/N/counters).
#pragma once

#include <string>

namespace rdmacheck::doctor {

enum class CounterKind { kTraffic, kError, kCongestion };

struct CounterMeaning {
  CounterKind kind = CounterKind::kTraffic;
  std::string meaning;  // empty for plain traffic counters
};

CounterMeaning counter_meaning(const std::string& name);

}  // namespace rdmacheck::doctor
