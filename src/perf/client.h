// `rdmacheck bw HOST` / `rdmacheck lat HOST`: one session per queue pair
// with `rdmacheck serve`, counters read around the measurement on both sides,
// then the verdict. Measures only; report.h prints.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conn/diagnose.h"
#include "conn/target.h"
#include "findings/finding.h"
#include "perf/counters.h"
#include "perf/engine.h"
#include "perf/placement.h"
#include "perf/spec.h"
#include "perf/verdict.h"
#include "proto/messages.h"
#include "verbs/qp.h"

namespace rdmacheck::perf {

struct PerfOptions {
  conn::Target target;
  Spec spec;
  bool cm = false;                            // -R/--cm: connect through librdmacm (RC only)
  int cpu = -1;                               // --cpu; -1: a core on the device's NUMA node
  std::chrono::milliseconds timeout{120000};  // the whole command
  verbs::RcTiming timing;
  std::optional<uint8_t> ack_timeout;  // -u: both QPs' ACK timeout exponent, else from the RTT
  // A line saying how far the run is, at most every 200 ms once it has taken
  // a second ("" when done, to clear it); empty for none (JSON, not a TTY).
  std::function<void(const std::string&)> progress;
  // --run_infinitely: one line per interval (-D seconds) with that interval's figures.
  std::function<void(const std::string&)> interval;
};

struct PerfReport {
  PerfOptions options;
  bool ok = false;
  conn::Stage failed =
      conn::Stage::kDone;  // where it stopped (kOptions: refused before connecting)
  std::string error;
  verbs::CmBreak cm_break;      // --cm: the event that broke setup, or the deadline
  bool server_refused = false;  // the server answered the hello with its own error message
  std::string refusal_code;     // its code: a finding id about the server ("no-rdma-device")
  proto::AuthFailure auth = proto::AuthFailure::kNone;  // failed at conn::Stage::kAuth: why
  Error cause;  // the failure as a value, for the connection layer's diagnosis
  std::optional<proto::HostFacts> local;
  std::optional<proto::HostFacts> peer;
  std::string local_address;  // this host's end of the TCP connection ("" = none)
  std::vector<std::string> warnings;
  Placement placement;
  LinkFacts link;
  std::vector<BwSample> bw;
  std::vector<LatSample> lat;
  // A test that failed while measuring: how long before the failure the
  // last message of the size it was on completed (from: seconds into that
  // size; resumed is false), and the size.
  std::optional<Stall> stalled_before_failure;
  uint32_t failed_size = 0;
  Counters local_counters;  // deltas over the measurement
  Counters peer_counters;   // the server's deltas over its session
  std::vector<std::string> peer_wc_errors;
  // --cpu-util: CPU seconds each side's measuring thread(s) used over how
  // many wall seconds (the server: summed over its sessions, one per QP).
  struct CpuUse {
    double cpu_s = 0;
    double wall_s = 0;
  };
  std::optional<CpuUse> local_cpu;
  std::optional<CpuUse> peer_cpu;
  // --validate: how many checks of landed data ran (both sides), and what was wrong.
  uint64_t validation_checks = 0;
  std::vector<std::string> validation_errors;
  std::vector<Finding> findings;
  double elapsed_ms = 0;
};

PerfReport run_perf(const PerfOptions& o, const std::atomic<bool>& stop);

// 0 measured without warnings, 1 measured with warnings, 2 failed.
int exit_status(const PerfReport& r);

}  // namespace rdmacheck::perf
