#include "conn/diagnose.h"

#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

#include "conn/device_choice.h"
#include "conn/diagnose_rules.h"
#include "host/firewall.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::conn {

int answered_round_trips(const ConnObservation& o) {
  return o.pings_ok + static_cast<int>(std::count_if(o.ladder.begin(), o.ladder.end(),
                                                     [](const LadderResult& l) { return l.ok; }));
}

// A TLS record of the control connection failed its integrity check
// (net/channel.cc gives it EBADMSG), at whichever step: bytes changed
// between the two hosts, so no other conclusion about that step holds.
Finding tampered_finding(const ConnObservation& o) {
  Finding f = make_finding(FindingId::kSessionTampered, Severity::kFail, Layer::kConnection,
                           fmt::format("the control connection to {} was changed on the path: "
                                       "a TLS record failed its integrity check",
                                       o.host));
  f.evidence.push_back(o.error);
  f.fix = fmt::format(
      "something between the hosts rewrites TCP port {}: a proxy or load balancer "
      "(connect to the server's own address), a NIC or driver corrupting TCP "
      "(`ethtool -S` error counters, checksum offload), or an attacker on the path; "
      "the server's log has the same failure if the change was in this side's records",
      o.tcp_port);
  return f;
}

bool session_tampered(const ConnObservation& o) { return o.errnum == EBADMSG; }

namespace {

// A FAIL of the connection layer with its one piece of evidence, the error
// the step ended with, and its fix (none where no advice holds).
Finding failed(FindingId id, std::string summary, const ConnObservation& o, std::string fix = {},
               Layer layer = Layer::kConnection) {
  Finding f = make_finding(id, Severity::kFail, layer, std::move(summary));
  f.evidence.push_back(o.error);
  f.fix = std::move(fix);
  return f;
}

void tcp_connect_failed(const ConnObservation& o, std::vector<Finding>& out) {
  if (o.errnum != ECONNREFUSED) {
    out.push_back(failed(FindingId::kPeerUnreachable,
                         fmt::format("{} did not answer on TCP port {}", o.host, o.tcp_port), o,
                         "check the address, the route (ip route get ADDR) and firewalls on TCP " +
                             std::to_string(o.tcp_port)));
    return;
  }
  // A server bound to another of the host's addresses (serve --bind)
  // refuses here exactly as no server does: the fix names both.
  out.push_back(failed(
      FindingId::kServerNotListening,
      fmt::format("{} refused the connection on TCP port {}: no rdmacheck serve there", o.host,
                  o.tcp_port),
      o,
      fmt::format("start 'rdmacheck serve' on {} (or give its port with --port); if it runs with "
                  "--bind ADDR, connect to that ADDR ('ss -ltn sport = :{}' on {} shows where it "
                  "listens)",
                  o.host, o.tcp_port, o.host)));
}

// Setting up pins pages (the buffer's MR; CQ and QP rings on most NICs)
// against RLIMIT_MEMLOCK. ENOMEM or EPERM under a finite limit is that
// limit; under an unlimited one it is something else, said as it is.
void local_setup_failed(const ConnObservation& o, std::vector<Finding>& out) {
  if (o.no_rdma) {
    Finding f = *o.no_rdma;
    f.evidence.insert(f.evidence.begin(), o.error);
    out.push_back(std::move(f));
  } else if ((o.errnum == ENOMEM || o.errnum == EPERM) && o.memlock_limit) {
    Finding f = failed(FindingId::kMemlockTooLow,
                       "pinning memory failed: the locked-memory limit is too low", o,
                       "ulimit -l unlimited (or LimitMEMLOCK=infinity for a service; memlock in "
                       "/etc/security/limits.conf)");
    f.evidence.push_back(fmt::format("RLIMIT_MEMLOCK of this process: {} bytes (ulimit -l {})",
                                     *o.memlock_limit, *o.memlock_limit / 1024));
    out.push_back(std::move(f));
  } else {
    out.push_back(failed(FindingId::kLocalSetupFailed, "could not set up the local RDMA endpoint",
                         o, "run 'rdmacheck doctor' on this host"));
  }
}

void handshake_failed(const ConnObservation& o, std::vector<Finding>& out) {
  if (o.server_refused && o.refusal_code == name_of(FindingId::kNoRdmaDevice)) {
    // doctor's finding, about the server: it answers, but has nothing to test with.
    Finding f = make_finding(FindingId::kNoRdmaDevice, Severity::kFail, Layer::kDevice,
                             fmt::format("{} (the server) has no usable RDMA device", o.host));
    f.evidence.push_back(fmt::format("the server's message: {}", o.error));
    f.fix = fmt::format("run 'rdmacheck doctor' on {}: it says why and what to load", o.host);
    out.push_back(std::move(f));
  } else if (o.server_refused) {
    // The server answered, with its reason for not running the test.
    Finding f = make_finding(FindingId::kServerRefused, Severity::kFail, Layer::kConnection,
                             fmt::format("{} refused the test: {}", o.host, o.error));
    f.evidence.push_back(fmt::format("the server's message: {}", o.error));
    f.fix = fmt::format(
        "run 'rdmacheck doctor' on {}; check its -d/--ib-port/-x and this host's, and its log",
        o.host);
    out.push_back(std::move(f));
  } else if (o.errnum == ECONNRESET || o.errnum == ETIMEDOUT || o.errnum == EPIPE) {
    // The connection ended mid-handshake with no message from the server: its
    // handshake deadline passed (this host's bytes were late: a path that
    // stopped for seconds, a busy host) or an older server closed on a hello
    // it could not read. Only the server's log tells them apart.
    out.push_back(failed(
        FindingId::kHandshakeFailed,
        fmt::format("the connection to {} ended during the handshake, with no message from it",
                    o.host),
        o,
        fmt::format("the server's log on {} tells the two causes apart: 'no valid handshake: "
                    "... timed out' means this host's messages came too late (the path stopped "
                    "carrying packets for seconds, e.g. a link flap, or a host was too busy): "
                    "run the check again, and if it recurs watch the link (ip -s link, the "
                    "switch's port log); a line about the protocol or the message means another "
                    "rdmacheck version there: run the same version on both hosts",
                    o.host)));
  } else {
    out.push_back(failed(FindingId::kHandshakeFailed,
                         fmt::format("the handshake with {} failed", o.host), o,
                         "run the same rdmacheck version on both hosts; check the server's log"));
  }
}

void cm_connect_failed(const ConnObservation& o, std::vector<Finding>& out) {
  const auto& cm = o.cm_break;
  if (cm.is(RDMA_CM_EVENT_UNREACHABLE) || cm.timeout) {
    packets_lost(o, out);
  } else if (cm.is(RDMA_CM_EVENT_ADDR_ERROR) || cm.is(RDMA_CM_EVENT_ROUTE_ERROR)) {
    out.push_back(failed(
        cm.is(RDMA_CM_EVENT_ADDR_ERROR) ? FindingId::kCmAddressError : FindingId::kCmRouteError,
        "librdmacm could not map the peer's address to a local RDMA device and route", o,
        "check that the interface routing to the peer has an RDMA device (rdmacheck "
        "devices); with several NICs give the source: --src ADDR (UCX/MPI applications: "
        "UCX_RDMA_CM_SOURCE_ADDRESS=ADDR; librdmacm itself reads no such variable)"));
  } else if (cm.is(RDMA_CM_EVENT_REJECTED)) {
    Finding f = failed(FindingId::kCmRejected, "the peer rejected the rdma_cm connection", o,
                       "check that rdmacheck serve runs on the peer with the same port (and "
                       "version), and that its --allow list admits the address the request comes "
                       "from (--src)");
    if (!o.peer_cm_refusal.empty()) {
      // The server said why: the request did not come from the control connection's address.
      f.evidence.push_back("the server: " + o.peer_cm_refusal);
      f.fix =
          "let rdma_cm leave from the address the control connection comes from: drop --src "
          "or give it that address, and check that no NAT or proxy between the hosts "
          "rewrites the TCP connection's source address";
    }
    out.push_back(std::move(f));
  } else {
    out.push_back(
        failed(FindingId::kCmConnectFailed, "the rdma_cm connection could not be set up", o));
  }
}

void traffic_failed(const ConnObservation& o, std::vector<Finding>& out) {
  if (!o.wc_status && o.errnum == ETIMEDOUT) {
    // No completion at all before the deadline: treat as loss too.
    ConnObservation copy = o;
    copy.wc_status = IBV_WC_RETRY_EXC_ERR;
    packets_lost(copy, out);
    return;
  }
  switch (o.wc_status.value_or(-1)) {
    case IBV_WC_RETRY_EXC_ERR:
      packets_lost(o, out);
      break;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      out.push_back(failed(FindingId::kReceiverNotReady,
                           "the receiver had no receive buffer posted (RNR retry exceeded)", o,
                           "the receiving application must post receives before the sender sends"));
      break;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_LOC_PROT_ERR:
      out.push_back(failed(
          FindingId::kRemoteAccessError, "an RDMA access was refused (key, bounds or access flags)",
          o, "check rkey/address exchange and the access flags of the remote memory region"));
      break;
    default:
      out.push_back(failed(FindingId::kTrafficFailed, "the data transfer failed", o));
  }
}

// The findings of the step the test stopped at.
void stage_failed(const ConnObservation& o, std::vector<Finding>& out) {
  switch (o.failed) {
    case Stage::kOptions:
    case Stage::kDone:
      break;
    case Stage::kResolve:
      out.push_back(failed(FindingId::kBadAddress, fmt::format("cannot resolve '{}'", o.host), o,
                           "give the server's IP address or a name in /etc/hosts"));
      break;
    case Stage::kTcpConnect:
      tcp_connect_failed(o, out);
      break;
    case Stage::kAuth:
      out.push_back(auth_finding(o));
      break;
    case Stage::kLocalSetup:
      local_setup_failed(o, out);
      break;
    case Stage::kHandshake:
      handshake_failed(o, out);
      break;
    case Stage::kQpSetup:
      out.push_back(
          failed(FindingId::kQpSetupFailed, "a queue pair state change was refused", o,
                 "check the GID index and MTU (rdmacheck devices); a RoCE QP needs a valid GID"));
      break;
    case Stage::kCmConnect:
      cm_connect_failed(o, out);
      break;
    case Stage::kTraffic:
      traffic_failed(o, out);
      break;
  }
}

}  // namespace

// The step that failed names what happened; what the user forced, where the
// server answered from, what librdmacm needs and the certificates' dates
// then explain it (or warn) whatever the step.
std::vector<Finding> diagnose(const ConnObservation& o) {
  std::vector<Finding> out;
  if (session_tampered(o)) {
    out.push_back(tampered_finding(o));
    return out;
  }
  stage_failed(o, out);
  blame_user_selection(o, out);
  if (!o.user.any()) blame_peer_off_address(o, out);
  blame_cm_host(o, out);
  blame_forced_source(o, out);
  note_certificate_expiry(o, out);
  return out;
}

}  // namespace rdmacheck::conn
