// The RC local ACK timeout (4.096 us * 2^n per try) derived from the round
// trip measured on the control connection, the way TCP derives its RTO:
// srtt + 4 * rttvar, never below a floor. A fixed 67 ms (n = 14) is fine in a
// rack but retransmits on a slow, lossless path (an emulated lab, a busy
// host), which then reads as loss.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "net/tcp.h"
#include "verbs/qp.h"

namespace rdmacheck::conn {

// What the kernel's TCP knows about the path of a connected socket.
struct PathRtt {
  double srtt_us = 0;
  double rttvar_us = 0;
  uint32_t total_retrans = 0;  // segments TCP retransmitted on this connection
};
std::optional<PathRtt> tcp_path_rtt(const Fd& sock);

struct AckTimeout {
  uint8_t exponent = 14;
  bool from_user = false;      // --ack-timeout given: taken as is
  bool software = false;       // the software-RDMA floor applied
  std::optional<PathRtt> rtt;  // what it was derived from, when measured
  [[nodiscard]] double timeout_ms() const;
};

// The floor: 2^16 * 4.096 us = 268 ms, above Linux TCP's 200 ms minimum RTO.
constexpr uint8_t kMinAckTimeout = 16;
// Soft-RoCE (rxe) runs one retransmit timer per QP, armed by a send and left
// running after the ACK: it fires about once per timeout during a ping-pong
// and retransmits whatever is in flight then, lost or not. Measured in the
// lab's healthy 2 s latency tests: 2-5 such retries at 268 ms, 0-1 at 1.07 s.
constexpr uint8_t kMinAckTimeoutSoftware = 18;

// Software RDMA (rxe: vendor id 0xFFFFFF), whose transport runs on a host CPU.
bool software_rdma(ibv_context* dev);

// Smallest n with 4.096 us * 2^n >= us, clamped to [floor, 31].
uint8_t ack_timeout_exponent(double us, uint8_t floor = kMinAckTimeout);
AckTimeout choose_ack_timeout(const std::optional<PathRtt>& rtt, std::optional<uint8_t> user,
                              bool software = false);

// BASE with its ACK timeout derived from SOCK's round trip, for device DEV.
verbs::RcTiming rc_timing_for(const Fd& sock, ibv_context* dev, verbs::RcTiming base);

// "268 ms (2^16 x 4.096 us) from TCP rtt 3.1 ms +- 1.2 ms" / "... set by --ack-timeout".
std::string describe(const AckTimeout& a);
nlohmann::json to_json(const AckTimeout& a);

}  // namespace rdmacheck::conn
