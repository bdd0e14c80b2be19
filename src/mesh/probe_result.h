// What one direction of one pair measured: FROM's client against TO's
// in-process server, in one round. Plain data that crosses MPI as JSON
// (every rank measures, rank 0 analyses), so it reads back what it writes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "conn/diagnose.h"
#include "findings/finding.h"

namespace rdmacheck::mesh {

struct Probe {
  int from = 0;  // rank (host index) of the client
  int to = 0;    // rank of the server
  int round = 0;
  conn::Stage failed = conn::Stage::kDone;  // where the RC bring-up or ping stopped; kDone = none
  std::string error;
  int pings_sent = 0;
  int pings_ok = 0;
  // The least round trip of the answered pings (0: none): the path's own
  // latency. A busy host (or an emulated one) only adds to some round trips;
  // a delay on the path adds to every one, the least included.
  double rtt_us = 0;
  double rtt_median_us = 0;
  double bw_gbps = -1;   // RDMA WRITE bandwidth from FROM to TO; < 0: not measured
  std::string bw_error;  // why the bandwidth test did not finish ("" = it did)
  uint64_t loss_counters =
      0;  // both sides' loss counters (retransmissions, sequence errors) over it
  std::vector<Finding> findings;  // the connection diagnosis and the counters' findings
  double seconds = 0;

  [[nodiscard]] bool connected() const { return failed == conn::Stage::kDone; }
};

nlohmann::json to_json(const Probe& p);
Result<Probe> probe_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::mesh
