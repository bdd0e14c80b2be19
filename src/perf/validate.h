// --validate: what each side puts in its buffer and what it expects to find
// in it after a size has run. Every byte depends on the session's seed, the
// side that wrote it and the size step, so data left over from an earlier
// step, from the other direction or from nowhere (zeros) never passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "perf/spec.h"

namespace rdmacheck::perf {

enum class Side { kClient = 0, kServer = 1 };

uint8_t pattern_byte(uint32_t seed, Side side, uint32_t step, uint64_t offset);
void fill_pattern(char* p, uint64_t n, uint32_t seed, Side side, uint32_t step);
// The first wrong byte of P as "byte 17 of 4096 is 0x00, expected 0x5c", or
// nullopt when all N bytes are SIDE's pattern for STEP.
std::optional<std::string> check_pattern(const char* p, uint64_t n, uint32_t seed, Side side,
                                         uint32_t step);

// What a side of a test owns in its buffer with --validate, by operation.
// Sources are filled before a step, landings checked after it.
struct DataPlan {
  bool fills_send = false;         // write/send/write_imm: the send half carries our pattern
  bool fills_recv = false;         // read: the receive half is what the peer reads, our pattern
  bool checks_recv = false;        // the peer's pushes land in our receive half
  bool checks_fetch = false;       // our reads land in our send half
  bool checks_counter = false;     // atomics: the 8 bytes at the start of our receive half
  uint32_t recv_offset = 0;        // UD: received data follows the 40-byte GRH
  bool last_byte_stamped = false;  // write latency: the last byte is the ping-pong stamp
};

// SENDS: this side posts the operation (always the client; the server too
// when bidirectional). PEER_SENDS: the other side posts it. A latency test's
// write and send are ping-pongs: both sides push.
DataPlan data_plan(Op op, Kind kind, Transport transport, bool sends, bool peer_sends);

// Atomics: the peer's count of completed fetch-adds (or compare-swaps, each
// of which adds one) must be the 64-bit value at P. The responder stores it
// in its own byte order or, on some adapters, big-endian: either is right.
std::optional<std::string> check_counter(const char* p, uint64_t expected);

// The finding for a --validate run: data-validation-failed with the wrong
// bytes as evidence, or an info saying how many checks passed; nullopt when
// nothing was checked.
std::optional<Finding> validation_finding(uint64_t checks, const std::vector<std::string>& errors);

}  // namespace rdmacheck::perf
