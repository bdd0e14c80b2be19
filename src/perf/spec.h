// What a bw/lat test runs: the operation, transport, sizes and how each size
// is bounded, and the knobs of the posting loop. Pure: parsed and validated
// here, driven by the engine (engine.h) and described to the server
// (proto::PerfParams).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/kinds.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

// The operation, transport and kind of test are the handshake's own enums,
// each with one table (proto/kinds.h); perf reads its rules from there.
using Kind = proto::TestKind;  // kBw or kLat here
using proto::Op;
using proto::Transport;

inline bool is_atomic(Op op) { return proto::info(op).atomic; }
// The receiver must keep receive work requests posted (send, write with immediate).
inline bool two_sided(Op op) { return proto::info(op).two_sided; }
// The remote access the responder's buffer needs (IBV_ACCESS_REMOTE_* flags).
inline int remote_access(Op op) { return proto::info(op).remote_access; }

constexpr uint32_t kAtomicSize = 8;
constexpr uint32_t kMaxAllSize = 8u << 20;  // -a goes 2 B .. 8 MiB, as perftest

struct Spec {
  Kind kind = Kind::kBw;
  Op op = Op::kWrite;
  Transport transport = Transport::kRc;
  std::vector<uint32_t> sizes = {65536};
  uint64_t iterations = 1000;   // per size; 0 when bounded by duration
  double duration_s = 0;        // per size (-D); warm-up excluded from the figures
  bool run_infinitely = false;  // bw: until stopped; duration_s is the interval of live lines
  double warmup_s = 0;          // with -D: the first seconds are not counted
  uint32_t qps = 1;             // -q: queue pairs, each its own session
  uint32_t tx_depth = 128;      // outstanding sends per QP
  uint32_t rx_depth = 512;      // receives kept posted by the receiver (send, write_imm)
  uint32_t inline_size = 0;     // messages up to this size are posted inline
  uint32_t post_list = 1;       // work requests per ibv_post_send call
  uint32_t cq_mod = 1;          // signal every Nth work request
  bool events = false;          // bw -e: sleep on the completion channel, not busy-poll
  bool histogram = false;       // lat: print a latency histogram
  bool bidir = false;           // bw -b: both sides send at once
  bool validate = false;        // --validate: check the data that landed, on both sides
  bool cpu_util = false;        // --cpu-util: report both sides' CPU time over the test
};

// A one-line reason when the spec cannot run, nullopt when it can.
std::optional<std::string> validate(const Spec& s);

// The spec a bw/lat hello describes (the server's view of the client's test),
// so that the server holds it to the same rules (validate) as the client.
Spec spec_of(const proto::TestSpec& test);

// -a: powers of two from 2 B up to max_size (8 MiB), as perftest's -a.
std::vector<uint32_t> all_sizes(uint32_t max_size = kMaxAllSize);
// The largest size in the spec (the buffer each side registers).
uint32_t max_size(const Spec& s);

}  // namespace rdmacheck::perf
