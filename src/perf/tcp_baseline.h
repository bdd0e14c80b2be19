// Layer 3's TCP reference: what plain TCP does between the same two addresses
// (the rdmacheck server's own port, after the same key proof), measured next
// to RDMA so a report can say, as the seed's section 1 does, what RDMA buys:
// throughput and the CPU it costs each side, and the round-trip time.
//   bandwidth: the client streams for a few seconds; the server counts what
//     arrived between first byte and end of stream and reports its own
//     thread's CPU time; the rate is the receiver's.
//   latency: small echoes through the same framing as the connection probe
//     (a reference, not netperf: JSON framing adds a little on both sides).
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/target.h"
#include "net/channel.h"

namespace rdmacheck::perf {

struct TcpBaselineOptions {
  conn::Target target;
  double seconds = 2;                        // streaming time
  int round_trips = 200;                     // latency echoes
  std::chrono::milliseconds timeout{15000};  // the whole baseline
};

struct TcpBaseline {
  bool ok = false;
  std::string error;  // why it stopped early ("" when ok)
  // Bandwidth, as the server received it.
  uint64_t bytes = 0;
  double seconds = 0;
  double gbps = 0;
  double client_cpu_s = 0, client_wall_s = 0;  // the sending thread
  double server_cpu_s = 0, server_wall_s = 0;  // the receiving session's thread
  // Latency: half the round trip of small echoes, as lat reports RTT/2.
  int echoes = 0;
  double half_rtt_min_us = 0, half_rtt_median_us = 0;
  double elapsed_ms = 0;
};

TcpBaseline run_tcp_baseline(const TcpBaselineOptions& o);

// "TCP stream 2.0 s: 9.41 Gb/s, CPU here 35 %, on the server 60 %; TCP echo half RTT
// min/median 12.1/14.0 us"
std::string describe(const TcpBaseline& b);
nlohmann::json to_json(const TcpBaseline& b);

// The server's side. FIRST is {"type":"tcp-stream","seconds":S}: answers
// ready, counts the raw bytes that follow until the client shuts its side
// (or S + 5 s pass), then sends {"type":"tcp-stream-result", ...}.
std::string answer_tcp_stream(const Channel& sock, const nlohmann::json& first, Deadline end);

}  // namespace rdmacheck::perf
