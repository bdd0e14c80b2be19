// One client's session of `rdmacheck serve`, from the greeting to the end
// line: the key's proof, the first frame (a doctor request, a TCP probe or a
// test's hello), the refusals, the test. server.cc accepts, admits and runs
// these on their own threads; the session fuzz target (fuzz/session_fuzz.cc)
// drives one over a socketpair. Not part of any other floor's API.
#pragma once

#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/traffic_cap.h"
#include "findings/finding.h"
#include "net/channel.h"
#include "serve/admission.h"
#include "serve/cm_acceptor.h"
#include "serve/firewall_cache.h"
#include "serve/log.h"
#include "serve/server.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::serve {

struct SessionEnd {
  std::string line;       // logged once the slot is free
  bool ok = false;        // --one-off's exit status
  bool security = false;  // a key refused or a record changed on the path: Log::security
  bool counted = false;   // the client was past the handshake: --one-off and --exit-after count it
};

// The server's own doctor findings, for `check`'s device layer. One report
// serves every request for a minute: a stream of requests runs the firewall
// tools (as root) once a minute, not once each, and one request at a time.
class DoctorCache {
 public:
  explicit DoctorCache(FsRoot fs) : fs_(std::move(fs)) {}
  std::pair<nlohmann::json, size_t> report();

 private:
  FsRoot fs_;
  std::mutex mu_;
  nlohmann::json frame_;
  size_t count_ = 0;
  Clock::time_point made_{};
};

// What the sessions share besides the slots: the doctor report, the traffic pool.
struct Shared {
  DoctorCache doctor;
  conn::TrafficPool traffic;
  // doctor's finding when this host lists no RDMA device: the server still
  // answers doctor requests and TCP probes, and refuses RDMA tests with it.
  std::optional<Finding> no_rdma;
  FirewallCache firewall;  // failed tests' byes: one read every few seconds
};

// One client on SOCK, in clear until the greeting (PEER: its "addr:port" for the log): its first
// frame decides what it gets. ACCEPTOR: the rdma_cm listener, or nullptr. Returns the session's end
// line, which the caller logs once the slot is free.
SessionEnd session(int id, Channel& sock, const std::string& peer, const ServerOptions& o,
                   CmAcceptor* acceptor, Admission::Ticket& ticket, Shared& shared, Log& log);

}  // namespace rdmacheck::serve
