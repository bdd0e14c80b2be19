#include "conn/diagnose.h"

#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

namespace rdmacheck::conn {
namespace {

std::string subnet24(const std::string& gid) {
  // v4-mapped GID "0000:0000:0000:0000:0000:ffff:c612:0001": the /24 is c612:00
  if (gid.size() != 39 || gid.compare(25, 4, "ffff") != 0) return {};
  return gid.substr(30, 7);
}

// What showed that RoCE packets did not arrive.
std::string loss_evidence(const ConnObservation& o) {
  if (o.wc_status) {
    return fmt::format("completion status {} after the QPs reached RTS",
                       ibv_wc_status_str(static_cast<ibv_wc_status>(*o.wc_status)));
  }
  if (!o.cm_event.empty()) {
    return fmt::format(
        "the connection manager's request got no answer ({}); its packets are "
        "RoCE v2 (UDP 4791) too",
        o.cm_event);
  }
  return o.error;
}

// Causes of "RC QPs reached RTS, packets never acknowledged", ranked by evidence.
void packets_lost(const ConnObservation& o, std::vector<Finding>& out) {
  const bool peer_fw = !o.peer_firewall.empty();
  const bool local_fw = !o.local_firewall.empty();
  if (peer_fw || local_fw) {
    Finding f = make_finding("firewall-blocks-roce", Severity::kFail, Layer::kConnection,
                             "a firewall drops RoCE v2 (UDP 4791): the TCP handshake passed but no "
                             "RDMA packet was acknowledged");
    if (peer_fw) f.evidence.push_back(fmt::format("on {}: {}", o.host, o.peer_firewall));
    for (const auto& r : o.local_firewall) f.evidence.push_back("on this host: " + r);
    f.evidence.push_back(loss_evidence(o));
    f.fix = "iptables -I INPUT -p udp --dport 4791 -j ACCEPT (on the host whose rule is shown)";
    out.push_back(std::move(f));
  }
  if (o.local && o.peer) {
    if (o.local->gid_type != o.peer->gid_type) {
      Finding f = make_finding("gid-type-mismatch", Severity::kFail, Layer::kConnection,
                               "the two sides use different GID types");
      f.evidence.push_back(fmt::format("this host: index {} {} {}", o.local->gid_index,
                                       o.local->gid_type, o.local->gid));
      f.evidence.push_back(fmt::format("{}: index {} {} {}", o.host, o.peer->gid_index,
                                       o.peer->gid_type, o.peer->gid));
      f.fix =
          "use the RoCE v2 GID of the right address on both sides (-x N; see rdmacheck devices)";
      out.push_back(std::move(f));
    } else if (!subnet24(o.local->gid).empty() && !subnet24(o.peer->gid).empty() &&
               subnet24(o.local->gid) != subnet24(o.peer->gid)) {
      Finding f = make_finding("gid-subnet-mismatch", Severity::kWarn, Layer::kConnection,
                               "the GIDs in use carry addresses in different subnets");
      f.evidence.push_back(fmt::format("this host: {}  {}: {}", o.local->gid, o.host, o.peer->gid));
      f.fix = "check that the GID index matches the interface that routes to the peer (-x N)";
      out.push_back(std::move(f));
    }
  }
  // Small sizes passing and larger ones failing is a path-MTU problem.
  const LadderResult* last_ok = nullptr;
  const LadderResult* first_bad = nullptr;
  for (const auto& l : o.ladder) {
    if (l.ok && first_bad == nullptr) last_ok = &l;
    if (!l.ok && first_bad == nullptr) first_bad = &l;
  }
  const bool mtu_differs = o.local && o.peer && o.local->netdev_mtu != 0 &&
                           o.peer->netdev_mtu != 0 && o.local->netdev_mtu != o.peer->netdev_mtu;
  if (last_ok != nullptr && first_bad != nullptr) {
    Finding f =
        make_finding("mtu-black-hole", Severity::kFail, Layer::kConnection,
                     fmt::format("messages up to {} bytes pass, {} bytes fail: something on "
                                 "the path drops large frames",
                                 last_ok->size, first_bad->size));
    if (mtu_differs) {
      f.evidence.push_back(fmt::format("netdev MTU {} here, {} on {}", o.local->netdev_mtu,
                                       o.peer->netdev_mtu, o.host));
    }
    f.evidence.push_back(fmt::format("{} B: {}", first_bad->size, first_bad->error));
    f.fix =
        "set the same MTU on both hosts and every switch port (ip link set DEV mtu 9000); check "
        "with ping -M do -s 8972 PEER";
    out.push_back(std::move(f));
  } else if (mtu_differs) {
    Finding f = make_finding("mtu-mismatch", Severity::kWarn, Layer::kConnection,
                             "the two hosts' netdev MTUs differ");
    f.evidence.push_back(fmt::format("netdev MTU {} here, {} on {}", o.local->netdev_mtu,
                                     o.peer->netdev_mtu, o.host));
    f.fix = "set the same MTU on both hosts and the switch ports between them";
    out.push_back(std::move(f));
  }
  const bool explained = std::any_of(
      out.begin(), out.end(), [](const Finding& f) { return f.severity == Severity::kFail; });
  if (!explained) {
    Finding f = make_finding("roce-packets-lost", Severity::kFail, Layer::kConnection,
                             "the queue pairs reached RTS but no RDMA packet was acknowledged");
    f.evidence.push_back(loss_evidence(o));
    if (o.peer_firewall.empty()) {
      f.evidence.push_back(fmt::format("no rule dropping UDP 4791 found on this host{}",
                                       o.peer ? " or the peer" : ""));
    }
    f.fix =
        "check for firewalls or ACLs on UDP 4791 along the path, the GID index on both sides "
        "(rdmacheck devices), and the MTU of every hop";
    out.insert(out.begin(), std::move(f));
  }
}

}  // namespace

std::vector<Finding> diagnose(const ConnObservation& o) {
  std::vector<Finding> out;
  switch (o.failed) {
    case Stage::kOptions:
    case Stage::kDone:
      break;
    case Stage::kResolve: {
      Finding f = make_finding("bad-address", Severity::kFail, Layer::kConnection,
                               fmt::format("cannot resolve '{}'", o.host));
      f.evidence.push_back(o.error);
      f.fix = "give the server's IP address or a name in /etc/hosts";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kTcpConnect: {
      if (o.errnum == ECONNREFUSED) {
        Finding f = make_finding("server-not-listening", Severity::kFail, Layer::kConnection,
                                 fmt::format("{} refused the connection on TCP port {}: no "
                                             "rdmacheck serve there",
                                             o.host, o.tcp_port));
        f.evidence.push_back(o.error);
        f.fix = fmt::format("start 'rdmacheck serve' on {} (or give its port with --port)", o.host);
        out.push_back(std::move(f));
      } else {
        Finding f =
            make_finding("peer-unreachable", Severity::kFail, Layer::kConnection,
                         fmt::format("{} did not answer on TCP port {}", o.host, o.tcp_port));
        f.evidence.push_back(o.error);
        f.fix = "check the address, the route (ip route get ADDR) and firewalls on TCP " +
                std::to_string(o.tcp_port);
        out.push_back(std::move(f));
      }
      break;
    }
    case Stage::kLocalSetup: {
      // Registration pins pages against RLIMIT_MEMLOCK: ENOMEM (or EPERM) there is the limit.
      if (o.failed_call == "ibv_reg_mr" && (o.errnum == ENOMEM || o.errnum == EPERM)) {
        Finding f = make_finding("memlock-too-low", Severity::kFail, Layer::kConnection,
                                 "memory registration failed: the locked-memory limit is too low");
        f.evidence.push_back(o.error);
        f.fix =
            "ulimit -l unlimited (or LimitMEMLOCK=infinity for a service; memlock in "
            "/etc/security/limits.conf)";
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding("local-setup-failed", Severity::kFail, Layer::kConnection,
                                 "could not set up the local RDMA endpoint");
        f.evidence.push_back(o.error);
        f.fix = "run 'rdmacheck doctor' on this host";
        out.push_back(std::move(f));
      }
      break;
    }
    case Stage::kHandshake: {
      Finding f = make_finding("handshake-failed", Severity::kFail, Layer::kConnection,
                               fmt::format("the handshake with {} failed", o.host));
      f.evidence.push_back(o.error);
      f.fix = "run the same rdmacheck version on both hosts; check the server's log";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kQpSetup: {
      Finding f = make_finding("qp-setup-failed", Severity::kFail, Layer::kConnection,
                               "a queue pair state change was refused");
      f.evidence.push_back(o.error);
      f.fix = "check the GID index and MTU (rdmacheck devices); a RoCE QP needs a valid GID";
      out.push_back(std::move(f));
      break;
    }
    case Stage::kCmConnect: {
      if (o.cm_event == "UNREACHABLE" || o.cm_event == "timeout") {
        packets_lost(o, out);
      } else if (o.cm_event == "ADDR_ERROR" || o.cm_event == "ROUTE_ERROR") {
        Finding f = make_finding(o.cm_event == "ADDR_ERROR" ? "cm-address-error" : "cm-route-error",
                                 Severity::kFail, Layer::kConnection,
                                 "librdmacm could not map the peer's address to a local RDMA "
                                 "device and route");
        f.evidence.push_back(o.error);
        f.fix =
            "check that the interface routing to the peer has an RDMA device (rdmacheck "
            "devices); with several NICs give the source: --src ADDR or "
            "RDMA_CM_SOURCE_ADDRESS=ADDR";
        out.push_back(std::move(f));
      } else if (o.cm_event == "REJECTED") {
        Finding f = make_finding("cm-rejected", Severity::kFail, Layer::kConnection,
                                 "the peer rejected the rdma_cm connection");
        f.evidence.push_back(o.error);
        f.fix = "check that rdmacheck serve runs on the peer with the same port (and version)";
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding("cm-connect-failed", Severity::kFail, Layer::kConnection,
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
        Finding f = make_finding("receiver-not-ready", Severity::kFail, Layer::kConnection,
                                 "the receiver had no receive buffer posted (RNR retry exceeded)");
        f.evidence.push_back(o.error);
        f.fix = "the receiving application must post receives before the sender sends";
        out.push_back(std::move(f));
      } else if (wc == IBV_WC_REM_ACCESS_ERR || wc == IBV_WC_LOC_PROT_ERR) {
        Finding f = make_finding("remote-access-error", Severity::kFail, Layer::kConnection,
                                 "an RDMA access was refused (key, bounds or access flags)");
        f.evidence.push_back(o.error);
        f.fix = "check rkey/address exchange and the access flags of the remote memory region";
        out.push_back(std::move(f));
      } else {
        Finding f = make_finding("traffic-failed", Severity::kFail, Layer::kConnection,
                                 "the data transfer failed");
        f.evidence.push_back(o.error);
        out.push_back(std::move(f));
      }
      break;
    }
  }
  return out;
}

}  // namespace rdmacheck::conn
