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

namespace rdmacheck::perf {

enum class Kind { kBw, kLat };
enum class Op { kWrite, kRead, kSend, kWriteImm, kAtomicFadd, kAtomicCswap };

const char* kind_name(Kind k);  // "bw", "lat"
const char* op_name(Op op);     // "write", "read", "send", "write_imm", "atomic_fadd", ...
std::optional<Op> parse_op(std::string_view name);

bool is_atomic(Op op);
// The receiver must keep receive work requests posted (send, write with immediate).
bool two_sided(Op op);
// The remote access the responder's buffer needs (IBV_ACCESS_REMOTE_* flags).
int remote_access(Op op);
// Whether the op runs on the transport ("rc", "uc", "ud"), as the IB spec allows.
bool op_allowed_on(Op op, std::string_view transport);

constexpr uint32_t kAtomicSize = 8;
constexpr uint32_t kMaxAllSize = 8u << 20;  // -a goes 2 B .. 8 MiB, as perftest

struct Spec {
  Kind kind = Kind::kBw;
  Op op = Op::kWrite;
  std::string transport = "rc";
  std::vector<uint32_t> sizes = {65536};
  uint64_t iterations = 1000;  // per size; 0 when bounded by duration
  double duration_s = 0;       // per size (-D); warm-up excluded from the figures
  double warmup_s = 0;         // with -D: the first seconds are not counted
  uint32_t qps = 1;            // -q: queue pairs, each its own session
  uint32_t tx_depth = 128;     // outstanding sends per QP
  uint32_t rx_depth = 512;     // receives kept posted by the receiver (send, write_imm)
  uint32_t inline_size = 0;    // messages up to this size are posted inline
  uint32_t post_list = 1;      // work requests per ibv_post_send call
  uint32_t cq_mod = 1;         // signal every Nth work request
  bool histogram = false;      // lat: print a latency histogram
  bool bidir = false;          // bw -b: both sides send at once
  bool validate = false;       // --validate: check the data that landed, on both sides
  bool cpu_util = false;       // --cpu-util: report both sides' CPU time over the test
};

// A one-line reason when the spec cannot run, nullopt when it can.
std::optional<std::string> validate(const Spec& s);

// -a: powers of two from 2 B up to max_size (8 MiB), as perftest's -a.
std::vector<uint32_t> all_sizes(uint32_t max_size = kMaxAllSize);
// The largest size in the spec (the buffer each side registers).
uint32_t max_size(const Spec& s);

}  // namespace rdmacheck::perf
