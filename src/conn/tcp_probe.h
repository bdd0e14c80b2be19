// The TCP reference probe: a few echo round trips over a fresh TCP
// connection to the same server address and port as the RDMA test. A
// firewall on UDP 4791 leaves it clean; loss or a bad cable hurts it too, so
// it tells "RoCE only" from "the whole path".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "conn/loss.h"
#include "conn/target.h"
#include "net/channel.h"
#include "net/tcp.h"

namespace rdmacheck::conn {

struct TcpProbeOptions {
  Target target;  // host, port and key; the device part is not used
  int count = 20;
  uint32_t size = 1000;  // bytes of padding per echo: one full segment's worth
  std::chrono::milliseconds timeout{5000};
};

struct TcpProbeReport {
  bool connected = false;
  std::string error;
  ProbeTally tally{"tcp"};  // echoes sent / answered
  double rtt_min_us = 0, rtt_median_us = 0, rtt_max_us = 0;
  int delayed = 0;       // echoes later than the fastest by TCP's 200 ms minimum RTO
  uint32_t retrans = 0;  // segments this side's TCP retransmitted (TCP_INFO)
  double elapsed_ms = 0;
  // True when the probe saw signs of loss: retransmissions, delayed or missing echoes.
  [[nodiscard]] bool lossy() const {
    return retrans > 0 || delayed > 0 || tally.answered < tally.sent;
  }
};

TcpProbeReport run_tcp_probe(const TcpProbeOptions& o);

// Echoes that came back at least TCP's minimum RTO (200 ms) after the
// fastest one: a retransmitted segment does, a long path alone does not.
int delayed_echoes(const std::vector<double>& rtts_us);

// "TCP 1000 B: 20/20 echoes, rtt min/median/max 2.1/3.0/9.8 ms, 0 retransmitted, 0 delayed"
std::string describe(const TcpProbeReport& r);
nlohmann::json to_json(const TcpProbeReport& r);

// The server's side: FIRST is the client's first {"type":"tcp-echo"} frame;
// echoes it and every following one until the client closes, at most 1000,
// until END. Returns the session's outcome for the log.
std::string answer_tcp_echo(const Channel& sock, const nlohmann::json& first, Deadline end);

}  // namespace rdmacheck::conn
