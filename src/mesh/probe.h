// One direction of one pair, measured over RDMA verbs exactly as `check`
// does: an RC session with the partner's in-process server, pings (with the
// size ladder), and unless --quick a short RDMA WRITE bandwidth test with
// the port counters of both sides around it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "conn/target.h"
#include "mesh/probe_result.h"

namespace rdmacheck::mesh {

struct ProbeSettings {
  int pings = 20;
  std::vector<uint32_t> sizes = {65536};  // the bandwidth test's message sizes
  double duration_s = 1;                  // per size, after a short warm-up
};

// Connects to T and pings; fills from, to and round in from the arguments.
Probe ping_probe(const conn::Target& t, const ProbeSettings& s, int from, int to, int round,
                 std::chrono::milliseconds budget);

// The bandwidth from this host to T, into P (which pinged it first).
void bandwidth_probe(const conn::Target& t, const ProbeSettings& s, Probe& p,
                     std::chrono::milliseconds budget, const std::atomic<bool>& stop);

}  // namespace rdmacheck::mesh
