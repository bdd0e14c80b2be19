// Starts a program with its stdout (and optionally stderr) on a pipe we read:
// the one posix_spawn wrapper behind run_capture (iptables, nft) and the lab's
// QEMU guests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck {

struct SpawnOptions {
  bool stderr_to_pipe = false;     // else stderr goes to /dev/null
  bool own_process_group = false;  // a terminal's Ctrl-C then reaches only us
};

struct Spawned {
  pid_t pid = -1;
  Fd out;  // the read end of the child's stdout (close-on-exec)
};

// argv[0] is looked up in PATH; stdin is /dev/null. Fails when the program
// cannot be started (ENOENT when it is not installed).
Result<Spawned> spawn_piped(const std::vector<std::string>& argv, SpawnOptions o = {});

}  // namespace rdmacheck
