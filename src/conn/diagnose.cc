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

std::vector<Finding> diagnose(const ConnObservation& o) {
  std::vector<Finding> out;
  if (session_tampered(o)) {
    out.push_back(tampered_finding(o));
    return out;
  }
  switch (o.failed) {
    case Stage::kOptions:
    case Stage::kDone:
      break;
    case Stage::kResolve: {
      Finding f = make_finding(FindingId::kBadAddress, Severity::kFail, Layer::kConnection,
                               fmt::format("cannot resolve '{}'", o.host));
      f.evidence.push_back(o.error);
      f.fix = "give the server's IP address or a name in /etc/hosts";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kTcpConnect: {
      if (o.errnum == ECONNREFUSED) {
        Finding f =
            make_finding(FindingId::kServerNotListening, Severity::kFail, Layer::kConnection,
                         fmt::format("{} refused the connection on TCP port {}: no "
                                     "rdmacheck serve there",
                                     o.host, o.tcp_port));
        f.evidence.push_back(o.error);
        // A server bound to another of the host's addresses (serve --bind)
        // refuses here exactly as no server does: the fix names both.
        f.fix = fmt::format(
            "start 'rdmacheck serve' on {} (or give its port with --port); if it runs with "
            "--bind ADDR, connect to that ADDR ('ss -ltn sport = :{}' on {} shows where it "
            "listens)",
            o.host, o.tcp_port, o.host);
        out.push_back(std::move(f));
      } else {
        Finding f =
            make_finding(FindingId::kPeerUnreachable, Severity::kFail, Layer::kConnection,
                         fmt::format("{} did not answer on TCP port {}", o.host, o.tcp_port));
        f.evidence.push_back(o.error);
        f.fix = "check the address, the route (ip route get ADDR) and firewalls on TCP " +
                std::to_string(o.tcp_port);
        out.push_back(std::move(f));
      }
      break;
    }
    case Stage::kAuth:
      out.push_back(auth_finding(o));
      break;
    case Stage::kLocalSetup: {
      // Setting up pins pages (the buffer's MR; CQ and QP rings on most NICs)
      // against RLIMIT_MEMLOCK. ENOMEM or EPERM under a finite limit is that
      // limit; under an unlimited one it is something else, said as it is.
      if (o.no_rdma) {
        Finding f = *o.no_rdma;
        f.evidence.insert(f.evidence.begin(), o.error);
        out.push_back(std::move(f));
      } else if ((o.errnum == ENOMEM || o.errnum == EPERM) && o.memlock_limit) {
        Finding f = make_finding(FindingId::kMemlockTooLow, Severity::kFail, Layer::kConnection,
                                 "pinning memory failed: the locked-memory limit is too low");
        f.evidence.push_back(o.error);
        f.evidence.push_back(fmt::format("RLIMIT_MEMLOCK of this process: {} bytes (ulimit -l {})",
                                         *o.memlock_limit, *o.memlock_limit / 1024));
        f.fix =
            "ulimit -l unlimited (or LimitMEMLOCK=infinity for a service; memlock in "
            "/etc/security/limits.conf)";
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding(FindingId::kLocalSetupFailed, Severity::kFail, Layer::kConnection,
                                 "could not set up the local RDMA endpoint");
        f.evidence.push_back(o.error);
        f.fix = "run 'rdmacheck doctor' on this host";
        out.push_back(std::move(f));
      }
      break;
    }
    case Stage::kHandshake: {
      if (o.server_refused && o.refusal_code == name_of(FindingId::kNoRdmaDevice)) {
        // doctor's finding, about the server: it answers, but has nothing to test with.
        Finding f = make_finding(FindingId::kNoRdmaDevice, Severity::kFail, Layer::kDevice,
                                 fmt::format("{} (the server) has no usable RDMA device", o.host));
        f.evidence.push_back(fmt::format("the server's message: {}", o.error));
        f.fix = fmt::format("run 'rdmacheck doctor' on {}: it says why and what to load", o.host);
        out.push_back(std::move(f));
        break;
      }
      if (o.server_refused) {
        // The server answered, with its reason for not running the test.
        Finding f = make_finding(FindingId::kServerRefused, Severity::kFail, Layer::kConnection,
                                 fmt::format("{} refused the test: {}", o.host, o.error));
        f.evidence.push_back(fmt::format("the server's message: {}", o.error));
        f.fix = fmt::format(
            "run 'rdmacheck doctor' on {}; check its -d/--ib-port/-x and this host's, and its log",
            o.host);
        out.push_back(std::move(f));
        break;
      }
      Finding f = make_finding(FindingId::kHandshakeFailed, Severity::kFail, Layer::kConnection,
                               fmt::format("the handshake with {} failed", o.host));
      f.evidence.push_back(o.error);
      f.fix = "run the same rdmacheck version on both hosts; check the server's log";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kQpSetup: {
      Finding f = make_finding(FindingId::kQpSetupFailed, Severity::kFail, Layer::kConnection,
                               "a queue pair state change was refused");
      f.evidence.push_back(o.error);
      f.fix = "check the GID index and MTU (rdmacheck devices); a RoCE QP needs a valid GID";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kCmConnect: {
      if (o.cm_break.is(RDMA_CM_EVENT_UNREACHABLE) || o.cm_break.timeout) {
        packets_lost(o, out);
      } else if (o.cm_break.is(RDMA_CM_EVENT_ADDR_ERROR) ||
                 o.cm_break.is(RDMA_CM_EVENT_ROUTE_ERROR)) {
        Finding f =
            make_finding(o.cm_break.is(RDMA_CM_EVENT_ADDR_ERROR) ? FindingId::kCmAddressError
                                                                 : FindingId::kCmRouteError,
                         Severity::kFail, Layer::kConnection,
                         "librdmacm could not map the peer's address to a local RDMA "
                         "device and route");
        f.evidence.push_back(o.error);
        f.fix =
            "check that the interface routing to the peer has an RDMA device (rdmacheck "
            "devices); with several NICs give the source: --src ADDR (UCX/MPI applications: "
            "UCX_RDMA_CM_SOURCE_ADDRESS=ADDR; librdmacm itself reads no such variable)";
        out.push_back(std::move(f));
      } else if (o.cm_break.is(RDMA_CM_EVENT_REJECTED)) {
        Finding f = make_finding(FindingId::kCmRejected, Severity::kFail, Layer::kConnection,
                                 "the peer rejected the rdma_cm connection");
        f.evidence.push_back(o.error);
        if (!o.peer_cm_refusal.empty()) {
          // The server said why: the request did not come from the control connection's address.
          f.evidence.push_back("the server: " + o.peer_cm_refusal);
          f.fix =
              "let rdma_cm leave from the address the control connection comes from: drop --src "
              "or give it that address, and check that no NAT or proxy between the hosts "
              "rewrites the TCP connection's source address";
        } else {
          f.fix =
              "check that rdmacheck serve runs on the peer with the same port (and version), and "
              "that its --allow list admits the address the request comes from (--src)";
        }
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding(FindingId::kCmConnectFailed, Severity::kFail, Layer::kConnection,
                                 "the rdma_cm connection could not be set up");
        f.evidence.push_back(o.error);
        out.push_back(std::move(f));
      }
      break;
    }
    case Stage::kTraffic: {
      const int wc = o.wc_status.value_or(-1);
      if (wc == IBV_WC_RETRY_EXC_ERR || (o.wc_status == std::nullopt && o.errnum == ETIMEDOUT)) {
        if (!o.wc_status) {
          // No completion at all before the deadline: treat as loss too.
          ConnObservation copy = o;
          copy.wc_status = IBV_WC_RETRY_EXC_ERR;
          packets_lost(copy, out);
        } else {
          packets_lost(o, out);
        }
      } else if (wc == IBV_WC_RNR_RETRY_EXC_ERR) {
        Finding f = make_finding(FindingId::kReceiverNotReady, Severity::kFail, Layer::kConnection,
                                 "the receiver had no receive buffer posted (RNR retry exceeded)");
        f.evidence.push_back(o.error);
        f.fix = "the receiving application must post receives before the sender sends";
        out.push_back(std::move(f));
      } else if (wc == IBV_WC_REM_ACCESS_ERR || wc == IBV_WC_LOC_PROT_ERR) {
        Finding f = make_finding(FindingId::kRemoteAccessError, Severity::kFail, Layer::kConnection,
                                 "an RDMA access was refused (key, bounds or access flags)");
        f.evidence.push_back(o.error);
        f.fix = "check rkey/address exchange and the access flags of the remote memory region";
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding(FindingId::kTrafficFailed, Severity::kFail, Layer::kConnection,
                                 "the data transfer failed");
        f.evidence.push_back(o.error);
        out.push_back(std::move(f));
      }
      break;
    }
  }
  blame_user_selection(o, out);
  if (!o.user.any()) blame_peer_off_address(o, out);
  blame_cm_host(o, out);
  blame_forced_source(o, out);
  note_certificate_expiry(o, out);
  return out;
}

}  // namespace rdmacheck::conn
