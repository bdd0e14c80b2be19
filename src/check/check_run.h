// One `check` run: its state, shared by the three layers that check.cc's
// run_check drives in the README's order (device, connection, performance),
// one file each. Internal to check/.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "check/check.h"
#include "conn/target.h"
#include "findings/finding.h"

namespace rdmacheck::check {

struct CheckRun {
  CheckRun(const CheckOptions& options, const std::atomic<bool>& stop_flag);

  const CheckOptions& o;
  const std::atomic<bool>& stop;
  CheckReport r;
  Clock::time_point start;
  Deadline end;
  std::string me;  // this host's name, on its findings
  // Left by the device layer for the later ones: the doctors' connection and
  // performance findings, and the port findings that wait for the connection
  // layer to name the port under test.
  std::vector<Finding> deferred;
  std::vector<Finding> local_ports;
  std::vector<Finding> peer_ports;
  std::vector<std::pair<std::string, std::string>> local_port_states;
  conn::Target target;  // o.target with the priority the tests' packets carry

  // True (and the step noted) once the deadline passed or the user stopped.
  bool expired(const std::string& step);
  // This host's port findings, judged for the port the connection layer used.
  void judge_ports();
  LayerReport& layer(Layer l) { return r.layers[static_cast<size_t>(l)]; }
  CheckReport done();
};

// Each layer: false when the check stops after it (the report says why).
bool device_layer(CheckRun& run);
void choose_priority(CheckRun& run);
bool connection_layer(CheckRun& run);
void performance_layer(CheckRun& run);

// Shared by the layers.
inline void merge(LayerReport& layer, Finding f) { merge_finding(layer.findings, std::move(f)); }
inline LayerReport& layer(CheckReport& r, Layer l) { return r.layers[static_cast<size_t>(l)]; }
// About one port ("dev/port"): which port the server uses is known only after layer 2.
bool is_port_finding(const Finding& f);
void finish_layer(LayerReport& l, Clock::time_point t0);
void not_run(CheckReport& r, size_t from, const std::string& why);

}  // namespace rdmacheck::check
