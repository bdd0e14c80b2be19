// Port counters around a test: a snapshot of hw_counters/* and counters/*
// before and after, the deltas, and what they say about the link during the
// test (retransmissions, sequence errors and timeouts mean loss; CNPs and ECN
// marks mean congestion). Reading goes through FsRoot; the rest is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "sysfs/port_counters.h"

namespace rdmacheck::perf {

// Snapshots and deltas: sysfs/port_counters.h.
using rdmacheck::Counters;
using rdmacheck::delta;
using rdmacheck::read_counters;

// The counters that mean loss or congestion, by the names drivers give them
// (rxe, mlx5, InfiniBand port counters).
bool is_loss_counter(const std::string& name);
bool is_congestion_counter(const std::string& name);
// Packets moved by the port (sent + received) per the deltas; 0 when unknown.
uint64_t packets(const Counters& d);

// packet-loss-during-test (requests lost), ack-late (requests arrived, ACKs
// late), receiver-not-ready-during-test and congestion-during-test from both
// sides' deltas, each WARN from its own rate.
// fallback_packets is used when neither side's counters count packets.
// Whether ID is one counter_findings raises (its evidence differs from test to test).
bool is_counter_finding(FindingId id);

std::vector<Finding> counter_findings(const Counters& local, const Counters& peer,
                                      const std::string& local_host, const std::string& peer_host,
                                      uint64_t fallback_packets);

}  // namespace rdmacheck::perf
