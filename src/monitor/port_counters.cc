#include "monitor/port_counters.h"

#include <fmt/core.h>

namespace rdmacheck::monitor {

void declare_port_metrics(Registry& r) {
  r.declare("rdmacheck_port_events_total", MetricType::kCounter,
            "What a local port counter (sysfs hw_counters/ and counters/, as the diagnosis reads "
            "them) grew since the monitor first read it, read after every probe round that used "
            "the port.");
}

void PortCounterTracker::sample(Registry& r, const std::string& prober, const std::string& device,
                                int port) {
  if (device.empty()) return;
  const Counters now = read_counters(fs_, device, port);
  const std::lock_guard lock(mu_);
  const auto key = std::make_pair(device, port);
  const auto it = last_.find(key);
  const bool first = it == last_.end();
  size_t n = 0;
  for (const auto& [name, value] : now) {
    if (++n > kMaxCountersPerPort) break;
    uint64_t grew = 0;
    if (!first) {
      const auto before = it->second.find(name);
      if (before != it->second.end() && value > before->second) grew = value - before->second;
    }
    const Labels l = {{"counter", name},
                      {"device", device},
                      {"port", fmt::format("{}", port)},
                      {"prober", prober}};
    r.add("rdmacheck_port_events_total", l, static_cast<double>(grew));
  }
  last_[key] = now;
}

}  // namespace rdmacheck::monitor
