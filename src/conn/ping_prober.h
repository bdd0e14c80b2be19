// The round trips of `rdmacheck ping` and of the monitor's probes, on one
// endpoint: send, wait for the echo and the send's completion, and tell a
// lost datagram, an acknowledged send left unanswered and a failed work
// request apart. Internal to conn/ping.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "conn/endpoint.h"
#include "proto/messages.h"

namespace rdmacheck::conn {

// One round trip: send SIZE bytes, wait for the echo and the send's completion.
struct RoundTrip {
  bool ok = false;
  bool lost = false;   // UD: no echo in time, the QP still usable (a datagram may be lost)
  bool acked = false;  // RC: the send completed (the peer acknowledged it), the answer did not come
  double rtt_us = 0;
  std::optional<double> turnaround_us;  // the responder's stamp, when it stamps
  std::optional<int> wc_status;
  int errnum = 0;
  std::string error;
};

// Round trips on one endpoint. Each probe carries its sequence number, so a
// UD echo that comes back after its probe was given up is recognised and
// skipped instead of being taken for the next probe's answer.
class Prober {
 public:
  Prober(Endpoint& ep, const proto::QpInfo& peer, bool write, bool stamped)
      : ep_(ep),
        peer_(peer),
        write_(write),
        stamped_(stamped),
        ud_(ep.qp->qp_type == IBV_QPT_UD),
        posted_(ep.recv_slots, false) {}
  RoundTrip run(uint32_t size, std::chrono::milliseconds timeout);

 private:
  void fill(uint32_t size) const;
  [[nodiscard]] uint32_t tag_of(const char* data, uint32_t len) const;
  Status ensure_recv();

  Endpoint& ep_;
  const proto::QpInfo& peer_;
  bool write_;
  bool stamped_;  // the responder writes its turnaround at proto::kTurnaroundOffset
  bool ud_;
  uint32_t seq_ = 0;
  std::vector<bool> posted_;  // per receive slot
};

}  // namespace rdmacheck::conn
