// The local ports' counters as Prometheus counters (#26): the counters the
// diagnosis reads (sysfs/port_counters.h: hw_counters/* and counters/* of a
// port) for every device and port a probe round used, read after each round.
// Each read adds what every counter grew since the one before, so a counter
// that the driver resets (or that goes backwards) costs a read's worth of
// counting, never a negative step; the first read of a port is its baseline
// (its series start at 0).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "monitor/metrics.h"
#include "sysfs/fs_root.h"
#include "sysfs/port_counters.h"

namespace rdmacheck::monitor {

// Counters of one port exported at most (rxe has about 40, mlx5 about 80).
constexpr size_t kMaxCountersPerPort = 256;

void declare_port_metrics(Registry& r);

class PortCounterTracker {
 public:
  explicit PortCounterTracker(FsRoot fs) : fs_(std::move(fs)) {}

  // Reads DEVICE's PORT and adds each counter's growth since the last read
  // into R under PROBER. Safe from several round threads at once.
  void sample(Registry& r, const std::string& prober, const std::string& device, int port);

 private:
  FsRoot fs_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, Counters> last_;
};

}  // namespace rdmacheck::monitor
