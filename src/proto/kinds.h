// What a test is, as both sides and every layer name it: the kind of test,
// the transport, and the operation. Each has one table; the operation's row
// also holds its verbs opcode, the remote access the target buffer needs, and
// where it may run. Names, the handshake's validation, the CLI's choices and
// the perf engine all read these tables.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "base/enum_table.h"

namespace rdmacheck::proto {

enum class TestKind { kPing, kBw, kLat };
enum class Transport { kRc, kUc, kUd };
enum class Op { kWrite, kRead, kSend, kWriteImm, kAtomicFadd, kAtomicCswap };

constexpr unsigned bit(Transport t) { return 1u << static_cast<unsigned>(t); }
constexpr unsigned bit(TestKind k) { return 1u << static_cast<unsigned>(k); }

struct OpInfo {
  Op op;
  std::string_view name;
  ibv_wr_opcode opcode;  // what the requester posts
  int remote_access;     // IBV_ACCESS_REMOTE_* the target buffer needs
  bool two_sided;        // the receiver keeps receive work requests posted
  bool atomic;           // moves exactly 8 bytes
  unsigned transports;   // bit(Transport) where the IB spec allows it
  unsigned kinds;        // bit(TestKind) of the tests that run it
};

inline constexpr unsigned kAllTransports = 0b111;
inline constexpr std::array<OpInfo, 6> kOps = {{
    {Op::kWrite, "write", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, false, false,
     bit(Transport::kRc) | bit(Transport::kUc),
     bit(TestKind::kPing) | bit(TestKind::kBw) | bit(TestKind::kLat)},
    {Op::kRead, "read", IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_READ, false, false, bit(Transport::kRc),
     bit(TestKind::kBw) | bit(TestKind::kLat)},
    {Op::kSend, "send", IBV_WR_SEND, 0, true, false, kAllTransports,
     bit(TestKind::kPing) | bit(TestKind::kBw) | bit(TestKind::kLat)},
    {Op::kWriteImm, "write_imm", IBV_WR_RDMA_WRITE_WITH_IMM, IBV_ACCESS_REMOTE_WRITE, true, false,
     bit(Transport::kRc) | bit(Transport::kUc), bit(TestKind::kBw)},
    {Op::kAtomicFadd, "atomic_fadd", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_ACCESS_REMOTE_ATOMIC, false,
     true, bit(Transport::kRc), bit(TestKind::kBw) | bit(TestKind::kLat)},
    {Op::kAtomicCswap, "atomic_cswap", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_ACCESS_REMOTE_ATOMIC, false,
     true, bit(Transport::kRc), bit(TestKind::kBw) | bit(TestKind::kLat)},
}};

constexpr const OpInfo& info(Op op) {
  for (const auto& i : kOps) {
    if (i.op == op) return i;
  }
  return kOps[0];
}
constexpr bool op_allowed_on(Op op, Transport t) { return (info(op).transports & bit(t)) != 0; }
constexpr bool op_allowed_in(Op op, TestKind k) { return (info(op).kinds & bit(k)) != 0; }
// The transports a kind of test runs on: ping proves RC (and UD); bw/lat all three.
constexpr bool kind_runs_on(TestKind k, Transport t) {
  return k != TestKind::kPing || t != Transport::kUc;
}

// "write | read | ...": the operations a kind of test runs, for help texts.
inline std::string op_choices(TestKind k) {
  std::string s;
  for (const auto& i : kOps) {
    if (!op_allowed_in(i.op, k)) continue;
    if (!s.empty()) s += " | ";
    s += i.name;
  }
  return s;
}

}  // namespace rdmacheck::proto

namespace rdmacheck {

template <>
struct EnumNames<proto::TestKind> {
  static constexpr std::array<std::pair<proto::TestKind, std::string_view>, 3> table = {{
      {proto::TestKind::kPing, "ping"},
      {proto::TestKind::kBw, "bw"},
      {proto::TestKind::kLat, "lat"},
  }};
};

template <>
struct EnumNames<proto::Transport> {
  static constexpr std::array<std::pair<proto::Transport, std::string_view>, 3> table = {{
      {proto::Transport::kRc, "rc"},
      {proto::Transport::kUc, "uc"},
      {proto::Transport::kUd, "ud"},
  }};
};

template <>
struct EnumNames<proto::Op> {
  static constexpr auto table = [] {
    std::array<std::pair<proto::Op, std::string_view>, proto::kOps.size()> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = {proto::kOps[i].op, proto::kOps[i].name};
    return t;
  }();
};

}  // namespace rdmacheck
