#include "check/check.h"

#include <unistd.h>

#include "check/check_run.h"
#include "findings/port_subject.h"

namespace rdmacheck::check {
namespace {

using Millis = std::chrono::duration<double, std::milli>;

std::string hostname() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

}  // namespace

CheckRun::CheckRun(const CheckOptions& options, const std::atomic<bool>& stop_flag)
    : o(options),
      stop(stop_flag),
      start(Clock::now()),
      end(start + options.timeout),
      me(hostname()),
      target(options.target) {
  r.options = o;
  for (auto l : {Layer::kDevice, Layer::kConnection, Layer::kPerformance}) {
    r.layers.push_back(LayerReport{l});
  }
}

bool CheckRun::expired(const std::string& step) {
  if (Clock::now() < end && !stop.load()) return false;
  r.expired_in = stop.load() ? step + " (interrupted)" : step;
  return true;
}

void CheckRun::judge_ports() {
  scope_to_port(local_ports, tested_port(r.local, local_port_states, o.target.dev));
  for (auto& f : local_ports) merge(layer(Layer::kDevice), std::move(f));
  local_ports.clear();
}

CheckReport CheckRun::done() {
  r.elapsed_ms = Millis(Clock::now() - start).count();
  return r;
}

bool is_port_finding(const Finding& f) { return parse_port_subject(f.subject).has_value(); }

void finish_layer(LayerReport& l, Clock::time_point t0) {
  l.status = status_of(l.findings);
  l.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

void not_run(CheckReport& r, size_t from, const std::string& why) {
  for (size_t i = from; i < r.layers.size(); ++i) {
    r.layers[i].status = LayerStatus::kNotRun;
    r.layers[i].not_run_reason = why;
  }
}

// The three layers in the README's order; each decides whether the next runs.
CheckReport run_check(const CheckOptions& o, const std::atomic<bool>& stop) {
  CheckRun run(o, stop);
  if (!device_layer(run)) return run.done();
  choose_priority(run);
  if (!connection_layer(run)) return run.done();
  performance_layer(run);
  return run.done();
}

}  // namespace rdmacheck::check
