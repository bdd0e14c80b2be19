#include "mesh/probe.h"

#include <algorithm>

#include "conn/ping.h"
#include "perf/client.h"
#include "perf/counters.h"

namespace rdmacheck::mesh {

using std::chrono::milliseconds;

Probe ping_probe(const conn::Target& t, const ProbeSettings& s, int from, int to, int round,
                 milliseconds budget) {
  const auto start = Clock::now();
  conn::PingOptions po;
  po.target = t;
  po.count = s.pings;
  po.interval_s = 0;  // back to back: the round's time goes to the measurement
  po.timeout = budget;
  po.ping_timeout = std::min(milliseconds(3000), budget);
  const auto rep = conn::run_ping(po);
  Probe p{.from = from, .to = to, .round = round};
  p.failed = rep.obs.failed;
  p.error = rep.obs.error;
  p.pings_sent = rep.stats.sent;
  p.pings_ok = rep.stats.received;
  p.rtt_us = rep.stats.min;
  p.rtt_median_us = rep.stats.median;
  for (const auto& f : rep.findings) {
    if (f.severity != Severity::kOk) p.findings.push_back(f);
  }
  p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return p;
}

void bandwidth_probe(const conn::Target& t, const ProbeSettings& s, Probe& p, milliseconds budget,
                     const std::atomic<bool>& stop) {
  const auto start = Clock::now();
  perf::PerfOptions po;
  po.target = t;
  po.spec.kind = perf::Kind::kBw;
  po.spec.op = perf::Op::kWrite;
  po.spec.sizes = s.sizes;
  po.spec.iterations = 0;
  po.spec.duration_s = s.duration_s;
  po.spec.warmup_s = std::min(0.2, s.duration_s / 4);
  po.timeout = budget;
  const auto rep = perf::run_perf(po, stop);
  uint64_t lost = 0;
  for (const auto* c : {&rep.local_counters, &rep.peer_counters}) {
    for (const auto& [name, delta] : *c) {
      if (perf::is_loss_counter(name)) lost += delta;
    }
  }
  p.loss_counters = lost;
  if (rep.ok && !rep.bw.empty()) {
    // Over several sizes the slowest counts: the pair is as good as its worst.
    double g = rep.bw.front().avg_gbps;
    for (const auto& b : rep.bw) g = std::min(g, b.avg_gbps);
    p.bw_gbps = g;
  } else {
    p.bw_error = rep.error.empty() ? "the bandwidth test did not finish" : rep.error;
  }
  for (const auto& f : rep.findings) {
    if (f.severity != Severity::kOk) p.findings.push_back(f);
  }
  p.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace rdmacheck::mesh
