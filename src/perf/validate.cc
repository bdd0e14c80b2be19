#include "perf/validate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace rdmacheck::perf {

uint8_t pattern_byte(uint32_t seed, Side side, uint32_t step, uint64_t offset) {
  // An odd multiplier per term: consecutive steps, the two sides and
  // neighbouring offsets all differ in every byte position.
  const uint64_t v = seed * 0x9e3779b1ull + static_cast<uint64_t>(side) * 0x55 +
                     uint64_t{step} * 0x2b + offset * 0x3d + (offset >> 8) * 0x11;
  const auto b = static_cast<uint8_t>(v ^ (v >> 13));
  return b;
}

void fill_pattern(char* p, uint64_t n, uint32_t seed, Side side, uint32_t step) {
  for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<char>(pattern_byte(seed, side, step, i));
}

std::optional<std::string> check_pattern(const char* p, uint64_t n, uint32_t seed, Side side,
                                         uint32_t step) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t want = pattern_byte(seed, side, step, i);
    const auto got = static_cast<uint8_t>(p[i]);
    if (got != want) {
      return fmt::format("byte {} of {} is 0x{:02x}, expected 0x{:02x}", i, n, got, want);
    }
  }
  return std::nullopt;
}

DataPlan data_plan(Op op, Kind kind, Transport transport, bool sends, bool peer_sends) {
  DataPlan d;
  const bool push = op == Op::kWrite || op == Op::kSend || op == Op::kWriteImm;
  const bool pingpong = kind == Kind::kLat && (op == Op::kWrite || op == Op::kSend);
  if (push) {
    d.fills_send = sends || pingpong;
    d.checks_recv = peer_sends || pingpong;
  } else if (op == Op::kRead) {
    d.fills_recv = peer_sends;
    d.checks_fetch = sends;
  } else {
    d.checks_counter = peer_sends;
  }
  d.recv_offset = transport == Transport::kUd && op == Op::kSend ? 40 : 0;
  d.last_byte_stamped = kind == Kind::kLat && op == Op::kWrite;
  return d;
}

std::optional<std::string> check_counter(const char* p, uint64_t expected) {
  uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  if (v == expected || __builtin_bswap64(v) == expected) return std::nullopt;
  return fmt::format("the atomic target holds {}, expected {} (one per completed operation)", v,
                     expected);
}

std::optional<Finding> validation_finding(uint64_t checks, const std::vector<std::string>& errors) {
  if (checks == 0 && errors.empty()) return std::nullopt;
  Finding f;
  f.layer = Layer::kPerformance;
  if (errors.empty()) {
    f.id = FindingId::kDataValidated;
    f.severity = Severity::kInfo;
    f.summary = fmt::format("all {} checks of the data that landed found it intact", checks);
    return f;
  }
  f.id = FindingId::kDataValidationFailed;
  f.severity = Severity::kFail;
  f.summary = fmt::format("{} of {} checks found data that is not what was sent", errors.size(),
                          std::max<uint64_t>(checks, errors.size()));
  for (size_t i = 0; i < errors.size() && i < 8; ++i) f.evidence.push_back(errors[i]);
  f.fix =
      "data corrupted on the way is a NIC, firmware or driver fault: update firmware and driver, "
      "try another port or cable, and report it with this output";
  return f;
}

}  // namespace rdmacheck::perf
