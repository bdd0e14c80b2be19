// Turns every probe of a mesh into matrices and names the culprit. Pure: the
// probes and each host's doctor findings in, findings out, so every rule is
// unit-tested over synthetic matrices.
//
// Outliers come from robust statistics over the fleet, never mean and sigma:
// one bad host touches N-1 of the N(N-1)/2 pairs (half of them at N = 4), so
// the median of the pairs is not a safe reference; the median of each host's
// own median is (one bad host moves one host median). A pair is bad when its
// figure lies beyond that reference by more than kMadFactor scaled MADs and
// by a relative margin (rxe and busy hosts jitter; a MAD of 0 flags nothing
// by itself). A host all of whose pairs are bad is the culprit
// (mesh-bad-host); a bad pair with both hosts otherwise fine is the link
// (mesh-bad-pair); a pair that never connected is mesh-unreachable-pair with
// the connection layer's own diagnosis.
//
// A latency is an outlier only when it also stands out of its own pings'
// spread: a delay on the path adds to every round trip, the least included,
// while a busy host (an emulated guest, a neighbour's job) adds to some, so a
// pair whose least round trip exceeds the fleet by less than its own median
// exceeds its least is showing the hosts' load, not its path (a healthy lab
// mesh on a loaded host: 4.3 ms against 1.9 ms, its pings spread 3.8 ms).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "mesh/probe_result.h"

namespace rdmacheck::mesh {

constexpr double kMadFactor = 5;      // scaled MADs (1.4826 x MAD ~ sigma for normal noise)
constexpr double kLatencyMargin = 1;  // and at least this much above the reference (x median)
// Below the reference by at least this (x median): a pair at under a quarter
// of the fleet. Emulated guests on a shared host halve a pair's bandwidth by
// chance; a link with a real fault (loss, a slow port) costs more than that.
constexpr double kBandwidthMargin = 0.75;
constexpr double kLossFloor = 0.02;  // lost pings: at least 2 % of them

// Rows are the client (from), columns the server (to); nullopt: not measured.
using Matrix = std::vector<std::vector<std::optional<double>>>;

struct Matrices {
  Matrix latency_us;                      // least RC ping round trip (Probe::rtt_us)
  Matrix latency_median_us;               // the median of the same pings
  Matrix bandwidth_gbps;                  // RDMA WRITE, from row to column
  Matrix loss;                            // fraction of pings lost
  Matrix loss_counters;                   // both sides' loss counters over the bandwidth test
  std::vector<std::vector<bool>> failed;  // the probe did not connect
  std::vector<std::vector<std::string>> bw_error;  // connected, but the bandwidth test failed
};
Matrices matrices(int hosts, const std::vector<Probe>& probes);

// The fleet's reference for one figure: the median of the hosts' medians and
// the scaled MAD around it.
struct Reference {
  double median = 0;
  double mad = 0;  // 1.4826 x median absolute deviation
};

double median(std::vector<double> v);
Reference reference(const std::vector<double>& host_medians);

struct PairVerdict {
  int a = 0, b = 0;  // a < b
  bool unreachable = false;
  std::vector<std::string> bad;  // "latency 20.4 ms (fleet 0.41 ms)", ...
  std::optional<double> latency_us, bandwidth_gbps, loss;
  double latency_spread_us = 0;  // median - least of the direction latency_us came from
};

struct Analysis {
  Matrices m;
  std::optional<Reference> latency, bandwidth;
  std::vector<PairVerdict> pairs;  // every pair, a < b
  std::vector<Finding> findings;   // mesh-bad-host, mesh-bad-pair, mesh-unreachable-pair,
                                   // mesh-too-few-hosts, mesh-healthy
};

Analysis analyse(const std::vector<std::string>& hosts, const std::vector<Probe>& probes);

// Each host's doctor findings, summarised over the fleet: the same finding
// (id and subject) on every host is one line with the count, on some hosts
// one line naming them. OK findings are left out.
std::vector<Finding> summarise_doctor(const std::vector<std::string>& hosts,
                                      const std::vector<std::vector<Finding>>& per_host);

}  // namespace rdmacheck::mesh
