// The monitor's peer list (#26): the hosts a prober watches, from a file
// that every host of a fleet can share (the prober skips itself).
// One peer per line: a host name or address, optionally with :PORT
// ([v6]:PORT for an IPv6 address with a port); '#' starts a comment; blank
// lines are skipped; a peer listed twice is watched once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::monitor {

struct Peer {
  std::string host;
  uint16_t port = 0;
  // The peer's name in metrics and reports: host, or host:port when the
  // port is not the default.
  std::string name;
};

// Every peer of TEXT; a line that is not one host (two words, a bad port)
// is an error naming its line (WHERE: the file's name, for the message).
Result<std::vector<Peer>> parse_peers(const std::string& text, uint16_t default_port,
                                      const std::string& where);
// parse_peers over the file PATH; a file without any peer is an error too.
Result<std::vector<Peer>> load_peers(const std::string& path, uint16_t default_port);

// Where the peer list comes from (--peers-from).
enum class PeerSource {
  kList,      // --peers FILE: one peer per line (parse_peers)
  kHostfile,  // --peers FILE is an MPI hostfile: "host [slots=N] [max_slots=N] ..."
  kSlurm,     // the job's nodes: $SLURM_JOB_NODELIST, e.g. "node[01-04,07],gpu-a[1-2]"
};

// An Open MPI / MPICH hostfile: the first word of a line is the host, the
// words after it are KEY=VALUE settings for mpirun (slots, max_slots), which
// a prober does not need; anything else after the host is an error.
Result<std::vector<Peer>> parse_hostfile(const std::string& text, uint16_t default_port,
                                         const std::string& where);
// Slurm's compressed host list (scontrol show hostnames does the same):
// comma-separated names, each with bracketed ranges and lists whose zero
// padding is kept ("n[01-03,7]" -> n01 n02 n03 n7; "r[1-2]-n[1-2]" -> four).
// At most kMaxPeers names.
constexpr size_t kMaxPeers = 100000;
Result<std::vector<std::string>> expand_hostlist(const std::string& list);

// PEERS without this machine: entries naming one of SELF_NAMES (its host
// name, short and long) or one of SELF_ADDRESSES (its interfaces'), so one
// file serves the whole fleet.
std::vector<Peer> without_self(std::vector<Peer> peers, const std::vector<std::string>& self_names,
                               const std::vector<std::string>& self_addresses);
// This machine's host names (gethostname, and its part before the first dot)
// and the addresses of its interfaces (getifaddrs), for without_self.
std::vector<std::string> self_names();
std::vector<std::string> self_addresses();

}  // namespace rdmacheck::monitor
