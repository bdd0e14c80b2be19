// One probe round of `rdmacheck monitor` (#26): a few pings of one
// transport to one peer's `serve`, through the same path as `rdmacheck
// ping` (conn::run_ping, no size ladder), and what the round says about the
// peer, counted into the metrics the rules in contrib/prometheus/ read.
//
// A round's probes fall in three kinds: answered; lost (the path: never
// acknowledged, a TCP connect that timed out, a datagram not echoed); and
// unanswered (the peer's host: an RC send its NIC acknowledged but whose
// answer never came, or a serve that accepted the connection and then said
// nothing). A round that could not probe at all for a reason of its own
// (the key refused, no local device, no serve listening) counts no probe:
// it is an error of that stage, and the peer is down.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "conn/ping.h"
#include "conn/target.h"
#include "findings/finding.h"
#include "monitor/metrics.h"
#include "monitor/peers.h"
#include "proto/messages.h"

namespace rdmacheck::monitor {

enum class Outcome {
  kUp,     // every probe answered
  kLoss,   // some probes lost, some answered: the path loses
  kDown,   // nothing answered and the probes were lost: the host or its path
  kStall,  // probes unanswered: the peer's host stopped answering
  kError,  // no probe sent (the stage names why)
};
std::string_view outcome_name(Outcome o);

struct ProbeResult {
  std::string peer;       // Peer::name
  std::string transport;  // "rc" | "ud"
  int sent = 0;
  int answered = 0;
  int lost = 0;
  int unanswered = 0;
  std::vector<double> rtt_s;  // answered probes' round trips
  // The responder's turnaround of each answered probe that carried one (a
  // serve that stamps: proto::Welcome::probe), in the order of rtt_s: the
  // network's share of a round trip is rtt_s[i] - turnaround_s[i].
  std::vector<double> turnaround_s;
  Outcome outcome = Outcome::kError;
  std::string stage;              // the stage that failed ("" when none did)
  std::string error;              // its message
  std::vector<Finding> findings;  // the round's warnings and failures, as ping names them
  double elapsed_s = 0;
  std::string device;  // the local RDMA device the round used ("" before one was chosen)
  int port = 0;        // and its port
  // A failed work request's completion status (ibv_wc_status), when one ended the round.
  std::optional<int> wc_status;
};

// A completion status as a label value: libibverbs' own words, in snake
// case ("transport_retry_counter_exceeded"); a fixed, small set.
std::string wc_status_label(int status);

// What a ping report says about its round (pure: the tests feed it reports).
ProbeResult result_of(const std::string& peer, const conn::PingReport& r);

struct ProbeOptions {
  conn::Target target;  // fs, device choice, key; host and port are the peer's
  int count = 5;
  double interval_s = 0.05;
  std::chrono::milliseconds timeout{8000};       // the whole round
  std::chrono::milliseconds ping_timeout{2000};  // one round trip
};

// One round to PEER over TRANSPORT (blocks for at most o.timeout and the connect).
ProbeResult probe(const Peer& peer, proto::Transport transport, const ProbeOptions& o);

// The families record() fills, declared once on a registry.
void declare_metrics(Registry& r);
// Counts ROUND into the registry under PROBER (this host's name); the
// finding gauges of the peer and transport are replaced by this round's.
void record(Registry& r, const std::string& prober, const ProbeResult& round);

}  // namespace rdmacheck::monitor
