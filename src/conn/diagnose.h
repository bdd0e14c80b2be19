// Turns what a connection test observed into findings, ranked by evidence.
// Pure: every input is in ConnObservation, so each rule is unit-tested.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "findings/finding.h"
#include "proto/auth.h"
#include "proto/messages.h"
#include "sysfs/rdma_sysfs.h"
#include "verbs/cm.h"

namespace rdmacheck::conn {

// Where a client's test stopped, in the order a session goes through them.
enum class Stage {
  kOptions,  // the test's parameters were refused (nothing to diagnose on the path)
  kResolve,
  kTcpConnect,
  kAuth,  // the greeting and the key's proof (proto/auth.h), before any verbs object
  kLocalSetup,
  kHandshake,
  kQpSetup,
  kCmConnect,
  kTraffic,
  kDone
};

struct LadderResult {
  uint32_t size = 0;
  bool ok = false;
  double rtt_us = 0;
  std::string error;
};

// A device, port and GID as one side selected them.
struct Selection {
  std::string device;
  int port = 0;
  PortState port_state = PortState::kUnknown;
  int gid_index = -1;
  std::string gid;  // sysfs text
  GidType gid_type = GidType::kUnknown;
  std::string netdev;
};

// What the user forced with -d, --ib-port and -x, what that selected, and what
// rdmacheck picks by itself, so that a failure can be put down to the flag.
struct UserSelection {
  bool device = false;                 // -d given
  bool port = false;                   // --ib-port given
  bool gid = false;                    // -x given
  std::optional<Selection> forced;     // nullopt: the forced selection could not be opened
  std::optional<Selection> automatic;  // nullopt: nothing forced, or no automatic choice
  std::string local_address;           // this host's address towards the peer
  [[nodiscard]] bool any() const { return device || port || gid; }
};

// --cm: what librdmacm needs on this host, read when a test asked for it.
struct CmHost {
  bool used = false;        // --cm was asked
  bool dev_node = true;     // /dev/infiniband/rdma_cm exists (rdma_ucm provides it)
  bool ucm_loaded = true;   // /sys/module/rdma_ucm
  bool cm_loaded = true;    // /sys/module/rdma_cm
  std::string source;       // the source address rdma_cm resolves from (--src, else the route's)
  bool source_rdma = true;  // an RDMA device's GID table carries SOURCE
  // --src given: the route's own source address towards the peer, what
  // carries SOURCE and what the route would use (nullopt: not found), so a
  // failure can be put down to --src as to -d.
  bool forced_source = false;
  std::string route_source;
  std::optional<Selection> source_at;
  std::optional<Selection> route_at;
};

struct ConnObservation {
  std::string host;  // what the user asked to reach
  uint16_t tcp_port = 0;
  Stage failed = Stage::kDone;  // the first stage that failed; kDone = none
  int errnum = 0;               // errno of the failure, if any
  std::string error;            // its message, naming the call that failed
  // Segments this side's TCP resent on the control connection before a
  // failure of its setup (SessionFailure::tcp_resent).
  uint32_t tcp_resent = 0;
  // This process's RLIMIT_MEMLOCK soft limit in bytes when the failure
  // happened; nullopt = unlimited. Pinning (MRs, and on most NICs CQ and QP
  // buffers) counts against it.
  std::optional<uint64_t> memlock_limit;
  std::optional<int> wc_status;  // completion status of a failed work request (ibv_wc_status)
  verbs::CmBreak cm_break;       // --cm: the event that broke setup, or the deadline
  bool server_refused = false;   // the server answered the hello with its own error message
  std::string refusal_code;  // the refusal's code: a finding about the server ("no-rdma-device")
  proto::AuthFailure auth = proto::AuthFailure::kNone;  // kAuth: why
  std::optional<proto::HostFacts> local;
  std::optional<proto::HostFacts> peer;
  std::vector<std::string> local_firewall;  // rules here that drop UDP 4791
  std::string peer_firewall;                // the peer's own report, "" = none seen
  bool peer_reported = false;               // the peer's bye (and its firewall's view) came back
  // --cm: why the server rejected our connect request, from its bye ("" = it did not say).
  std::string peer_cm_refusal;
  // Certificate mode: this client's and the server's certificates near their end
  // (proto::expiring_certificates), one sentence each.
  std::vector<std::string> cert_expiring;
  std::vector<LadderResult> ladder;
  int pings_ok = 0;
  int pings_sent = 0;
  // RC pings whose send the peer acknowledged (its NIC, or rxe's kernel) but
  // whose answer never came: the peer's host stalled (its serve got no CPU,
  // or hung), not the path. The monitor counts them apart from loss.
  int pings_unanswered = 0;
  // RC probes: the sequence gaps this host's port counted while they ran
  // (sysfs/port_counters.h; the responder's NAKs for packets that arrived out
  // of sequence): frames of the failed size did reach the peer.
  uint64_t seq_gaps = 0;
  std::string seq_gap_counters;  // "hw_counters/rcvd_seq_err +12"
  UserSelection user;
  CmHost cm;
  // kLocalSetup on a machine that lists no RDMA device: doctor's finding, said as it is.
  std::optional<Finding> no_rdma;
};

std::vector<Finding> diagnose(const ConnObservation& o);
// certificate-expiring for the session to HOST when NOTES (its
// expiring_certificates) has any; bw and lat add it to their own findings.
std::optional<Finding> certificate_expiry_finding(const std::string& host,
                                                  const std::vector<std::string>& notes);
// Whether a TLS record of the control connection failed its integrity check
// (EBADMSG from net/channel.cc): then diagnose says only that.
bool session_tampered(const ConnObservation& o);
// Round trips the path answered before it stopped: pings and ladder sizes.
int answered_round_trips(const ConnObservation& o);

// The fix when rdma_cm resolves from another NIC than the route to PEER
// uses: the route's source address ROUTE_SOURCE for rdmacheck and for
// UCX/MPI applications, and the command that shows the routes.
std::string cm_source_fix(const std::string& route_source, const std::string& peer);

// Why what the user forced cannot reach the peer, or "" when nothing says so.
std::string why_selection_fails(const UserSelection& u, const std::optional<proto::HostFacts>& peer,
                                const std::string& open_error);

}  // namespace rdmacheck::conn

namespace rdmacheck {
template <>
struct EnumNames<conn::Stage> {
  static constexpr std::array<std::pair<conn::Stage, std::string_view>, 10> table = {{
      {conn::Stage::kOptions, "options"},
      {conn::Stage::kResolve, "resolve"},
      {conn::Stage::kTcpConnect, "tcp connect"},
      {conn::Stage::kAuth, "auth"},
      {conn::Stage::kLocalSetup, "local setup"},
      {conn::Stage::kHandshake, "handshake"},
      {conn::Stage::kQpSetup, "qp setup"},
      {conn::Stage::kCmConnect, "cm connect"},
      {conn::Stage::kTraffic, "traffic"},
      {conn::Stage::kDone, "done"},
  }};
};
}  // namespace rdmacheck
