// `rdmacheck ping HOST`: RC (or UD, or RDMA-write) ping-pong against
// `rdmacheck serve`, the QP state timeline of both sides, a size ladder, and
// findings when anything fails. Measures only; printing is in ping_print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/ack_timeout.h"
#include "conn/diagnose.h"
#include "conn/loss.h"
#include "conn/target.h"
#include "findings/finding.h"
#include "proto/messages.h"
#include "verbs/qp.h"

namespace rdmacheck::conn {

// A ping's whole budget by default: room for RC to exhaust its retries on a
// dead path (8 tries of rxe's 1 s ACK timeout floor) after a slow setup, and
// then to bring back both hosts' firewall reports.
inline constexpr std::chrono::milliseconds kPingTimeout{20000};

struct PingOptions {
  Target target;
  proto::Transport transport = proto::Transport::kRc;  // rc | ud
  bool write = false;                                  // RDMA WRITE with immediate instead of SEND
  bool cm = false;                                     // connect through librdmacm (as rping does)
  int count = 5;
  double interval_s = 0.2;
  uint32_t size = 64;
  bool ladder = true;
  std::chrono::milliseconds timeout = kPingTimeout;  // the whole command
  std::chrono::milliseconds ping_timeout{3000};      // one round trip
  verbs::RcTiming timing;
  // --ack-timeout: taken as is; without it the ACK timeout follows the TCP round trip.
  std::optional<uint8_t> ack_timeout;
  // UD probes per ladder size: a datagram has no retransmission, so one
  // lost probe must not fail a size class.
  int ladder_tries = 3;
  std::string forged_gid;  // test-only: see SessionRequest::forged_gid
  // Test-only (hidden --forge-qkey): UD datagrams carry this Q_Key instead of
  // the one the server told this session, as a guessing or replaying sender's
  // would; the lab proves the server's QP drops them.
  std::optional<uint32_t> forged_qkey;
  // `rdmacheck monitor`'s probe (proto::TestSpec::probe): the server runs it
  // in its probe slots and stamps its turnaround into each echo. Only
  // without the ladder and at most proto::kMaxProbeSize bytes.
  bool probe = false;
};

struct PingSample {
  int seq = 0;
  uint32_t size = 0;
  double rtt_us = 0;
  // The responder's own share of the round trip (its receive completion
  // read to its reply posted), when it stamped one (PingOptions::probe).
  std::optional<double> turnaround_us;
};

struct RttStats {
  int sent = 0;
  int received = 0;
  double min = 0, avg = 0, median = 0, p99 = 0, max = 0;
};
RttStats rtt_stats(std::vector<double> rtts, int sent);

struct PingReport {
  PingOptions options;
  ConnObservation obs;
  std::vector<proto::Step> local_timeline;
  std::vector<proto::Step> peer_timeline;
  std::vector<PingSample> samples;
  RttStats stats;
  AckTimeout ack;                  // the RC ACK timeout chosen for this connection
  std::vector<ProbeTally> probes;  // answered / sent per transport and size
  std::vector<std::string> warnings;
  std::vector<Finding> findings;
  double elapsed_ms = 0;
};

PingReport run_ping(const PingOptions& o);

// The ladder's sizes for a path MTU: 64 B up to beyond two MTUs.
std::vector<uint32_t> ladder_sizes(int mtu, bool ud);

}  // namespace rdmacheck::conn
