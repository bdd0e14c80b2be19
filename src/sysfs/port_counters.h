// A port's counters as sysfs shows them (hw_counters/* and counters/*, see
// Documentation/ABI/stable/sysfs-class-infiniband): snapshots, their deltas,
// and which names mean a gap in a packet sequence. Reading goes through
// FsRoot; the rest is pure. perf/counters.h reads them into findings; conn/
// reads the sequence errors of its own probes.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sysfs/fs_root.h"

namespace rdmacheck {

// "hw_counters/out_of_seq_request" -> value.
using Counters = std::map<std::string, uint64_t>;

// Every numeric counter of DEVICE's PORT (non-numbers and config files such as
// hw_counters/lifespan are skipped).
Counters read_counters(const FsRoot& fs, const std::string& device, int port);

// after - before for counters present in both that did not go backwards;
// only those that changed.
Counters delta(const Counters& before, const Counters& after);

// A gap in a packet sequence, seen by the responder (out_of_seq_request,
// out_of_sequence) or by the requester as the responder's NAK (rcvd_seq_err,
// packet_seq_err), by the names rxe, mlx5, bnxt_re and InfiniBand give them:
// the packets after the gap arrived.
bool is_sequence_gap_counter(const std::string& name);

// The sum of D's sequence-gap counters, and those counters as "name +N, ...".
uint64_t sequence_gaps(const Counters& d);
std::string describe_sequence_gaps(const Counters& d);

}  // namespace rdmacheck
