// The client's measuring loops, one for bandwidth and one for latency, the
// same for every operation (work_request.h builds what differs). Bandwidth
// busy-polls the CQ in batches with selective signalling and post lists;
// latency ping-pongs one message at a time, timed with steady_clock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "conn/endpoint.h"
#include "perf/spec.h"
#include "perf/stats.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

// One queue pair of the test and what the peer told about its side of it.
struct Lane {
  conn::Endpoint* ep = nullptr;
  proto::QpInfo peer;
};

struct BwSample {
  uint32_t size = 0;
  uint64_t msgs = 0;   // counted messages (warm-up excluded)
  double seconds = 0;  // counted time
  double avg_gbps = 0;
  double peak_gbps = 0;  // best window of a tenth of the run
  double mib_s = 0;
  double mpps = 0;
  std::vector<uint64_t> lane_ops;  // work requests completed on each lane, warm-up included
  // Bidirectional: what each direction moved; avg_gbps and the rest are their sum.
  bool bidir = false;
  double out_gbps = 0;
  double in_gbps = 0;
  // The counted time cut in kIntervals equal parts, each part's Gb/s: how
  // steady avg_gbps was. Empty when bidirectional (this side sees one direction).
  std::vector<double> interval_gbps;
  double interval_s = 0;  // their average length (exact unless points were sparse)
  // The longest time no message completed, warm-up included (seconds into
  // the run it began, its length, whether traffic resumed after it).
  Stall stall;
};
// A tenth of the run, as the peak's window: check's 1.5 s counted (2 s less
// the warm-up) are ten 150 ms parts.
constexpr int kIntervals = 10;

struct LatSample {
  uint32_t size = 0;
  bool half_round_trip = true;  // write/send: RTT/2 (as perftest); read/atomics: full RTT
  LatStats stats;
  std::vector<Bucket> histogram;  // when the spec asks for it
};

// Reaps completions of LANE's CQ without posting sends: receives are posted
// again as they complete (a bidirectional send test keeps them posted on both
// sides). A completion error is returned with the QP named.
Status service_receives(conn::Endpoint& ep);

// Called as a run goes (often: rate-limit it) with the messages or round
// trips completed so far; empty for none.
using Tick = std::function<void(uint64_t done)>;

// One size over every lane, bounded by the spec's iterations or duration and
// by HARD. A completion error ends the run with the status and the QP named.
Result<BwSample> run_bw(std::span<Lane> lanes, const Spec& s, uint32_t size, Deadline hard,
                        const std::atomic<bool>& stop, const Tick& tick = {});

// lat -D keeps every sample for its percentiles: a run ends early at this
// many (128 MiB of them), far beyond what a percentile needs.
constexpr size_t kMaxLatSamples = size_t{16} << 20;

// One size on one lane, for -n round trips or -D seconds. STAMP counts messages across sizes, in
// step with the responder (write: both sides watch the last byte of their buffer for it).
Result<LatSample> run_lat(Lane& lane, const Spec& s, uint32_t size, uint64_t& stamp, Deadline hard,
                          const std::atomic<bool>& stop, const Tick& tick = {});

// The byte a write ping-pong stamps into the last byte of message number N:
// never 0, so a zeroed buffer never matches.
inline uint8_t stamp_byte(uint64_t n) { return static_cast<uint8_t>(n % 255 + 1); }

}  // namespace rdmacheck::perf
