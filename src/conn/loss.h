// Loss as a rate, not a single shot: probes are counted per transport and
// size, each count with a Wilson 95 % interval, so 0 %, a few percent and
// 100 % can be told apart. A path is unusable only when nothing of a size
// class gets through; a few lost datagrams are loss, not a dead path.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "findings/finding.h"

namespace rdmacheck::conn {

struct Interval {
  double low = 0;  // fractions in [0, 1]
  double high = 0;
};
// Wilson score interval of k successes in n trials at 95 % (z = 1.96).
Interval wilson(int k, int n);

struct ProbeTally {
  std::string transport;  // "rc" | "ud" | "tcp"
  uint32_t size = 0;
  int sent = 0;
  int answered = 0;
  int slow = 0;  // RC: answered only after at least one ACK timeout (a retransmission)
  [[nodiscard]] int lost() const { return sent - answered; }
  [[nodiscard]] Interval loss() const;  // of the round trip, both directions
};

// Counts one probe into the tally of its transport and size.
void count_probe(std::vector<ProbeTally>& t, const std::string& transport, uint32_t size,
                 bool answered, bool slow = false);

// "UD 64 B: 97/100 answered, loss 3.0 % (95 % interval 1.0-8.5 %)".
std::string describe(const ProbeTally& t);
nlohmann::json to_json(const std::vector<ProbeTally>& t);

// WARN roce-loss when some probes of a size class were lost but others got
// through (or RC needed retransmissions); nothing when none was lost. A size
// class with no answer at all is a dead path, which diagnose() names.
std::vector<Finding> loss_findings(const std::vector<ProbeTally>& t, const std::string& host);

}  // namespace rdmacheck::conn
