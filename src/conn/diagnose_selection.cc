#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

#include "conn/device_choice.h"
#include "conn/diagnose_rules.h"
#include "host/firewall.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::conn {
namespace {

bool link_local(const std::string& gid) { return gid.rfind("fe80:", 0) == 0; }
bool v4_mapped(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}
const char* family(const std::string& gid) {
  if (v4_mapped(gid)) return "IPv4";
  return link_local(gid) ? "link-local IPv6" : "IPv6";
}

std::string describe(const Selection& s) {
  return fmt::format("{} port {} GID {} ({}, {}{})", s.device, s.port, s.gid_index, s.gid,
                     gid_type_name(s.gid_type), s.netdev.empty() ? "" : ", " + s.netdev);
}

// The flag the failure is put down to, and the value rdmacheck would use instead.
struct Blame {
  FindingId id;
  std::string flag;
  std::string instead;
};

Blame blame(const UserSelection& u) {
  const Selection& a = *u.automatic;
  const bool open = u.forced.has_value();
  if (u.gid && (!open || u.forced->gid != a.gid) &&
      (!u.device || (open && u.forced->device == a.device))) {
    return {FindingId::kForcedGidUnusable, fmt::format("-x {}", open ? u.forced->gid_index : -1),
            fmt::format("-x {}", a.gid_index)};
  }
  if (u.port && (!open || u.forced->port != a.port)) {
    return {FindingId::kForcedPortUnusable, fmt::format("--ib-port {}", open ? u.forced->port : 0),
            fmt::format("--ib-port {}", a.port)};
  }
  if (u.device) {
    return {FindingId::kForcedDeviceUnusable, fmt::format("-d {}", open ? u.forced->device : "?"),
            fmt::format("-d {}", a.device)};
  }
  return {FindingId::kForcedGidUnusable, "-x", fmt::format("-x {}", a.gid_index)};
}

// A failure whose cause is what the user forced: the flag's finding on top,
// the failure it caused folded under it as evidence.
// Only the RDMA side's failures can come from the device, port, GID or
// source address: not a name that does not resolve, a TCP connection refused,
// a key refused, a handshake that timed out on TCP, nor a server's refusal
// for its own reasons (busy, its budget, its missing device): only one that
// its QP towards this host's GID could not be set up.
bool rdma_stage(const ConnObservation& o) {
  return o.failed == Stage::kLocalSetup || o.failed == Stage::kQpSetup ||
         o.failed == Stage::kCmConnect || o.failed == Stage::kTraffic ||
         (o.failed == Stage::kHandshake && o.server_refused &&
          o.refusal_code == proto::kRefusedQpSetup);
}

// The failure's own findings, folded under the choice that caused them.
void fold_consequences(const ConnObservation& o, Finding& f, std::vector<Finding>& out) {
  f.evidence.push_back(fmt::format("what failed: {} ({})", name_of(o.failed), o.error));
  for (const auto& c : out) {
    f.evidence.push_back(
        fmt::format("consequence: {} {}: {}", severity_name(c.severity), id_name(c), c.summary));
  }
  out.clear();
  out.push_back(std::move(f));
}
}  // namespace

void blame_user_selection(const ConnObservation& o, std::vector<Finding>& out) {
  const UserSelection& u = o.user;
  if (!u.any() || !u.automatic || !rdma_stage(o)) return;
  const std::string why = why_selection_fails(u, o.peer, o.error);
  if (why.empty()) return;
  Blame b = blame(u);
  if (!u.forced) {
    // The flags named something that could not be opened; say what they were.
    b.flag = u.gid ? "-x" : u.port ? "--ib-port" : "-d";
  }
  Finding f = make_finding(b.id, Severity::kFail, Layer::kConnection,
                           fmt::format("{} selected {}: {}; without it rdmacheck uses {}", b.flag,
                                       u.forced ? describe(*u.forced)
                                                : std::string("something that could not be opened"),
                                       why, describe(*u.automatic)));
  f.fix = fmt::format("drop {} and let rdmacheck choose, or give {}", b.flag, b.instead);
  fold_consequences(o, f, out);
}

// --cm --src ADDR on another NIC than the route to the peer leaves from: the
// failure is put down to --src, with the address and device the route uses.
// Same netdev (a second address on it), or a source no RDMA device carries
// (blame_cm_host's case): not this rule's.
void blame_forced_source(const ConnObservation& o, std::vector<Finding>& out) {
  const CmHost& h = o.cm;
  if (!h.used || !h.dev_node || !h.forced_source || !h.source_at || !h.route_at || !rdma_stage(o))
    return;
  const Selection& s = *h.source_at;
  const Selection& r = *h.route_at;
  if (s.device == r.device && s.port == r.port && s.netdev == r.netdev) return;
  Finding f = make_finding(
      FindingId::kCmDeviceDiffers, Severity::kFail, Layer::kConnection,
      fmt::format("--src {} makes rdma_cm use {} port {}{}, but the route towards {} leaves from "
                  "{}{} ({} port {}): the rdma_cm connection failed on the other NIC",
                  h.source, s.device, s.port, s.netdev.empty() ? "" : " (" + s.netdev + ")", o.host,
                  h.route_source, r.netdev.empty() ? "" : " on " + r.netdev, r.device, r.port));
  f.subject = fmt::format("{}/{}", s.device, s.port);
  f.evidence.push_back(fmt::format("--src {}: {}", h.source, describe(s)));
  f.evidence.push_back(fmt::format("the route: {}", describe(r)));
  f.fix = cm_source_fix(h.route_source,
                        o.peer && !o.peer->local_address.empty() ? o.peer->local_address : o.host);
  fold_consequences(o, f, out);
}

std::string why_selection_fails(const UserSelection& u, const std::optional<proto::HostFacts>& peer,
                                const std::string& open_error) {
  if (!u.any() || !u.automatic) return {};
  const Selection& a = *u.automatic;
  if (!u.forced) return "it could not be used: " + open_error;
  const Selection& s = *u.forced;
  if (u.port && s.port_state != PortState::kActive) {
    return fmt::format("port {} is {}: nothing is sent or received on it", s.port,
                       s.port_state == PortState::kUnknown ? "not ACTIVE" : name_of(s.port_state));
  }
  if (u.device && s.device != a.device && !s.netdev.empty() && !a.netdev.empty() &&
      s.netdev != a.netdev) {
    return fmt::format("{} sits on {}, but this host reaches the peer from {} through {}", s.device,
                       s.netdev, u.local_address, a.netdev);
  }
  if (!u.gid && !u.device) return {};
  if (s.gid == a.gid) return {};
  const std::string peer_gid = peer && !peer->gid.empty() ? peer->gid : a.gid;
  const std::string peer_says =
      peer && !peer->gid.empty()
          ? fmt::format("the peer's GID is {} ({})", peer->gid, family(peer->gid))
          : fmt::format("this host reaches the peer from {} ({})", u.local_address, family(a.gid));
  if (s.gid_type != a.gid_type) {
    return fmt::format("it is a {} GID and the path needs {} ({})", gid_type_name(s.gid_type),
                       gid_type_name(a.gid_type),
                       s.gid_type == GidType::kRoceV1
                           ? "RoCE v1 is raw Ethernet: not routable, no UDP 4791"
                           : "both sides must use the same RoCE version");
  }
  if (link_local(s.gid) && !link_local(peer_gid)) {
    return "a link-local IPv6 GID only reaches peers on the same link that use IPv6 GIDs too; " +
           peer_says;
  }
  if (v4_mapped(s.gid) != v4_mapped(peer_gid)) {
    return fmt::format(
        "it is an {} GID and {}: both ends of a RoCE v2 path use one address "
        "family",
        family(s.gid), peer_says);
  }
  if (!s.netdev.empty() && !a.netdev.empty() && s.netdev != a.netdev) {
    return fmt::format("it belongs to {}, but this host reaches the peer from {} through {}",
                       s.netdev, u.local_address, a.netdev);
  }
  return fmt::format("it is not the GID of {}, the address this host uses towards the peer",
                     u.local_address);
}

// The server answered on a GID that is not the one of the address the client
// connected to: its GID lives on another device (serve -d/-x forced it, or
// the address moved), and packets to it leave by another route, if any.
void blame_peer_off_address(const ConnObservation& o, std::vector<Finding>& out) {
  if (o.failed != Stage::kQpSetup && o.failed != Stage::kTraffic) return;
  if (!o.peer || o.peer->local_address.empty() || o.peer->gid.empty()) return;
  const std::string want = address_gid_text(o.peer->local_address);
  if (want.empty() || want == o.peer->gid) return;
  const auto& p = *o.peer;
  Finding f = make_finding(
      FindingId::kPeerGidOffAddress, Severity::kFail, Layer::kConnection,
      fmt::format("the client connected to {} but the server answered on {} port {} GID[{}] {}{}, "
                  "which is not that address: RoCE packets go to another NIC's address",
                  p.local_address, p.device, p.port, p.gid_index, p.gid,
                  p.netdev.empty() ? "" : " (" + p.netdev + ")"));
  f.evidence.push_back(fmt::format("server's choice: {}", p.choice));
  f.evidence.push_back(fmt::format("the GID of {} would be {}", p.local_address, want));
  f.evidence.push_back(fmt::format("what failed: {} ({})", name_of(o.failed), o.error));
  for (const auto& c : out) {
    f.evidence.push_back(
        fmt::format("consequence: {} {}: {}", severity_name(c.severity), id_name(c), c.summary));
  }
  f.fix = p.forced.empty()
              ? fmt::format("connect to the address of {} on {}, or give {} an RDMA device",
                            p.device, p.netdev.empty() ? "its netdev" : p.netdev, p.local_address)
              : fmt::format(
                    "start 'rdmacheck serve' without {} (it then answers on the device that owns "
                    "the address the client connects to), or connect to the address of {}",
                    p.forced, p.netdev.empty() ? p.device : p.netdev);
  out.clear();
  out.push_back(std::move(f));
}

// --cm failed where librdmacm cannot work at all (no /dev/infiniband/rdma_cm)
// or cannot map the source address to a device: that is the cause, whatever
// event or call showed it.
void blame_cm_host(const ConnObservation& o, std::vector<Finding>& out) {
  const CmHost& h = o.cm;
  if (!h.used || (o.failed != Stage::kLocalSetup && o.failed != Stage::kCmConnect)) return;
  std::optional<Finding> f;
  if (!h.dev_node) {
    f = make_finding(
        FindingId::kRdmaCmUnavailable, Severity::kFail, Layer::kConnection,
        "rdma_cm cannot work on this host: /dev/infiniband/rdma_cm is missing, so librdmacm "
        "cannot resolve addresses or connect (the verbs path does not need it)");
    f->evidence.push_back(fmt::format("module rdma_ucm: {}; module rdma_cm: {}",
                                      h.ucm_loaded ? "loaded" : "not loaded",
                                      h.cm_loaded ? "loaded" : "not loaded"));
    f->fix =
        "modprobe rdma_ucm (it pulls in rdma_cm), and load it at boot (/etc/modules-load.d/, or "
        "rdma-core's rdma-load-modules@rdma.service)";
  } else if (!h.source_rdma && !h.source.empty()) {
    f = make_finding(
        FindingId::kCmSourceWithoutDevice, Severity::kFail, Layer::kConnection,
        fmt::format("no RDMA device's GID table carries {}, the source address rdma_cm resolves "
                    "from: the netdev that owns it has no RDMA device",
                    h.source));
    f->fix = fmt::format(
        "give --src the address of a netdev with an RDMA device ('rdmacheck devices' lists the "
        "addresses each device carries) or drop --src; UCX/MPI applications: "
        "UCX_RDMA_CM_SOURCE_ADDRESS=ADDR likewise (librdmacm itself reads no "
        "RDMA_CM_SOURCE_ADDRESS)");
  }
  if (!f) return;
  fold_consequences(o, *f, out);
}

std::string cm_source_fix(const std::string& route_source, const std::string& peer) {
  return fmt::format(
      "for rdmacheck give --src {} (or drop --src); for UCX/MPI applications set "
      "UCX_RDMA_CM_SOURCE_ADDRESS={} (librdmacm itself reads no RDMA_CM_SOURCE_ADDRESS); "
      "check the routes with 'ip route get {}'",
      route_source, route_source, peer);
}

}  // namespace rdmacheck::conn
