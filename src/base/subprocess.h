// Runs a helper program (iptables, nft) with a deadline and captures stdout.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck {

struct ProcessOutput {
  int exit_status = -1;    // -1 when killed by a signal or at the deadline
  bool timed_out = false;  // killed at the deadline
  std::string out;         // stdout (stderr is discarded)
};

// argv[0] is looked up in PATH. Fails when it cannot be started (ENOENT when
// the program is not installed); an exit status != 0 is not a failure.
Result<ProcessOutput> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout);

}  // namespace rdmacheck
