#include "conn/diagnose.h"

#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

#include "conn/device_choice.h"
#include "host/firewall.h"
#include "sysfs/rdma_sysfs.h"

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
  if (o.cm_break.happened()) {
    return fmt::format(
        "the connection manager's request got no answer ({}); its packets are "
        "RoCE v2 (UDP 4791) too",
        o.cm_break.name());
  }
  return o.error;
}

// The firewall rules both sides reported, split by whether they match every
// RoCE v2 packet or only some (by length, address, interface, ...).
struct FirewallRules {
  std::vector<std::string> all;
  std::vector<std::string> some;
  [[nodiscard]] bool empty() const { return all.empty() && some.empty(); }
};

// The two addresses of this path, from the GIDs both sides used.
std::vector<std::string> path_addresses(const ConnObservation& o) {
  std::vector<std::string> out;
  for (const auto* f : {&o.local, &o.peer}) {
    if (!*f) continue;
    const std::string a = gid_address((*f)->gid, parse_gid_type((*f)->gid_type));
    if (!a.empty()) out.push_back(a);
  }
  return out;
}

FirewallRules firewall_rules(const ConnObservation& o) {
  FirewallRules r;
  const auto addresses = path_addresses(o);
  auto add = [&](const std::string& where, const std::string& rule) {
    if (!matches_only_some(rule)) {
      r.all.push_back(where + rule);
    } else if (covers_path(rule, addresses)) {
      // Limited by address, and this path's address is the one it names.
      r.all.push_back(where + rule + " (this path's address is in it: every RoCE packet here)");
    } else {
      r.some.push_back(where + rule);
    }
  };
  // The server joins its rules with "; " in its bye.
  size_t from = 0;
  while (from < o.peer_firewall.size()) {
    const auto end = o.peer_firewall.find("; ", from);
    add(fmt::format("on {}: ", o.host), o.peer_firewall.substr(from, end - from));
    if (end == std::string::npos) break;
    from = end + 2;
  }
  for (const auto& rule : o.local_firewall) add("on this host: ", rule);
  return r;
}

// The ladder's first failure and the size that passed before it.
std::pair<const LadderResult*, const LadderResult*> ladder_break(const ConnObservation& o) {
  const LadderResult* last_ok = nullptr;
  for (const auto& l : o.ladder) {
    if (!l.ok) return {last_ok, &l};
    last_ok = &l;
  }
  return {last_ok, nullptr};
}

// What the sequence-gap counters said, and what that rules out.
std::string sequence_gap_evidence(const ConnObservation& o) {
  const LadderResult* first_bad = ladder_break(o).second;
  return fmt::format(
      "this host's port counted {} while the probes ran: the peer NAKed packets that arrived out "
      "of sequence, so packets of the failed {}message did reach it (not a size limit): "
      "reordering, or a gap from loss, broke the message",
      o.seq_gap_counters, first_bad != nullptr ? fmt::format("{} B ", first_bad->size) : "");
}

// Causes of "RC QPs reached RTS, packets never acknowledged", ranked by evidence.
void packets_lost(const ConnObservation& o, std::vector<Finding>& out) {
  const FirewallRules fw = firewall_rules(o);
  const auto [last_ok, first_bad] = ladder_break(o);
  const bool mtu_differs = o.local && o.peer && o.local->netdev_mtu != 0 &&
                           o.peer->netdev_mtu != 0 && o.local->netdev_mtu != o.peer->netdev_mtu;
  const bool some_passed = o.pings_ok > 0 || last_ok != nullptr;
  if (!fw.empty() && some_passed && first_bad != nullptr) {
    // Small messages pass, large ones die, and a rule matches RoCE: the rule
    // (by length, most often) is the cause and the black hole its consequence.
    Finding f = make_finding(
        FindingId::kFirewallBlocksSomeRoce, Severity::kFail, Layer::kConnection,
        fmt::format("a firewall rule drops some RoCE v2 (UDP 4791) packets: messages up to {} "
                    "bytes pass, {} bytes fail",
                    last_ok != nullptr ? last_ok->size : 0, first_bad->size));
    for (const auto* rules : {&fw.some, &fw.all}) {
      f.evidence.insert(f.evidence.end(), rules->begin(), rules->end());
    }
    f.evidence.push_back(fmt::format("{} B: {}", first_bad->size, first_bad->error));
    if (mtu_differs) {
      f.evidence.push_back(fmt::format("netdev MTU {} here, {} on {}", o.local->netdev_mtu,
                                       o.peer->netdev_mtu, o.host));
    }
    f.fix =
        "delete the rule or exempt RoCE from it: nft insert rule inet filter input udp dport 4791 "
        "accept (iptables -I INPUT -p udp --dport 4791 -j ACCEPT) on the host whose rule is shown";
    out.push_back(std::move(f));
    return;
  }
  if (!fw.empty() && !some_passed) {
    const bool all = !fw.all.empty();
    Finding f = make_finding(
        all ? FindingId::kFirewallBlocksRoce : FindingId::kFirewallBlocksSomeRoce, Severity::kFail,
        Layer::kConnection,
        all ? "a firewall drops RoCE v2 (UDP 4791): the TCP handshake passed but no RDMA packet "
              "was acknowledged"
            : "no RDMA packet was acknowledged, and a firewall rule matches some RoCE v2 (UDP "
              "4791) packets (see what it matches)");
    f.evidence = fw.all;
    f.evidence.insert(f.evidence.end(), fw.some.begin(), fw.some.end());
    f.evidence.push_back(loss_evidence(o));
    f.fix = "iptables -I INPUT -p udp --dport 4791 -j ACCEPT (on the host whose rule is shown)";
    out.push_back(std::move(f));
  }
  if (o.local && o.peer) {
    if (o.local->gid_type != o.peer->gid_type) {
      Finding f = make_finding(FindingId::kGidTypeMismatch, Severity::kFail, Layer::kConnection,
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
      Finding f = make_finding(FindingId::kGidSubnetMismatch, Severity::kWarn, Layer::kConnection,
                               "the GIDs in use carry addresses in different subnets");
      f.evidence.push_back(fmt::format("this host: {}  {}: {}", o.local->gid, o.host, o.peer->gid));
      f.fix = "check that the GID index matches the interface that routes to the peer (-x N)";
      out.push_back(std::move(f));
    }
  }
  // Small sizes passing and larger ones failing is a path-MTU problem, unless
  // the responder NAKed packets as out of sequence: then frames of the failed
  // size arrived, and what broke the message was their order or a gap.
  const bool frames_arrived = o.seq_gaps > 0;
  if (last_ok != nullptr && first_bad != nullptr && !frames_arrived) {
    Finding f =
        make_finding(FindingId::kMtuBlackHole, Severity::kFail, Layer::kConnection,
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
    Finding f = make_finding(FindingId::kMtuMismatch, Severity::kWarn, Layer::kConnection,
                             "the two hosts' netdev MTUs differ");
    f.evidence.push_back(fmt::format("netdev MTU {} here, {} on {}", o.local->netdev_mtu,
                                     o.peer->netdev_mtu, o.host));
    f.fix = "set the same MTU on both hosts and the switch ports between them";
    out.push_back(std::move(f));
  }
  const bool explained = std::any_of(
      out.begin(), out.end(), [](const Finding& f) { return f.severity == Severity::kFail; });
  if (!explained) {
    // The summary may not claim "nothing got through" when some round trips did.
    const int answered = answered_round_trips(o);
    Finding f = make_finding(
        FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection,
        answered == 0 ? std::string("the queue pairs reached RTS but no RDMA packet was "
                                    "acknowledged")
                      : fmt::format("{} RDMA round trips were answered, then one was never "
                                    "acknowledged (retries exhausted): RoCE packets were lost{}",
                                    answered, frames_arrived ? " or reordered" : ""));
    f.evidence.push_back(loss_evidence(o));
    if (frames_arrived) f.evidence.push_back(sequence_gap_evidence(o));
    if (fw.empty()) {
      f.evidence.push_back(o.peer_reported
                               ? "no rule dropping UDP 4791 found on this host or the peer"
                               : "no rule dropping UDP 4791 found on this host; the peer's "
                                 "firewall is unknown (its report did not come back)");
    }
    // Round trips that passed rule out a blocked port or a wrong GID: what
    // is left is loss, until one message ran out of its retries.
    f.fix = answered == 0
                ? "check for firewalls or ACLs on UDP 4791 along the path, the GID index on both "
                  "sides (rdmacheck devices), and the MTU of every hop"
                : "find where packets are dropped (switch port counters, ethtool -S, tc qdisc on "
                  "both hosts) and make the path lossless for RoCE (PFC + ECN); a firewall rule "
                  "that matches only some packets drops them too (iptables-save, nft list "
                  "ruleset)";
    out.insert(out.begin(), std::move(f));
  }
}

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
                     s.gid_type, s.netdev.empty() ? "" : ", " + s.netdev);
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
// Why the server would not let this client in (proto/auth.h), and what to do.
Finding auth_finding(const ConnObservation& o) {
  using proto::AuthFailure;
  FindingId id = FindingId::kAuthProtocol;  // kNone, kProtocol: the greeting itself failed
  std::string summary;
  std::string fix;
  switch (o.auth) {
    case AuthFailure::kKeyFileUnreadable:
      id = FindingId::kAuthKeyFileUnreadable;
      summary = "the key file given by --psk-file (or RDMACHECK_PSK_FILE) cannot be used";
      fix = "give the path of the server's key file (16..4096 bytes)";
      break;
    case AuthFailure::kKeyFileUnsafe:
      id = FindingId::kAuthKeyFileUnsafe;
      summary = "the key file is readable or writable by group or others: refused, as ssh does";
      fix = "chmod 600 the key file (and keep it owned by the user who runs rdmacheck)";
      break;
    case AuthFailure::kRequired:
      id = FindingId::kAuthRequired;
      summary = fmt::format("{} requires a pre-shared key and this client has none", o.host);
      fix = "give --psk-file FILE (or set RDMACHECK_PSK_FILE) with the key the server uses";
      break;
    case AuthFailure::kFailed:
      id = FindingId::kAuthFailed;
      summary = fmt::format("{} did not accept this client's key", o.host);
      fix =
          "use the key file the server uses (serve --psk-file); while keys are rolled the server "
          "accepts the old and the new one";
      break;
    case AuthFailure::kServerUnproven:
      id = FindingId::kAuthServerUnproven;
      summary = fmt::format("{} could not prove that it holds this client's key", o.host);
      fix = "make sure the address reaches the right server and that it was given the same key";
      break;
    case AuthFailure::kServerUnkeyed:
      id = FindingId::kAuthServerUnkeyed;
      summary = fmt::format(
          "{} runs without a key, and this client, which has one, will not "
          "talk to a server that cannot prove who it is",
          o.host);
      fix = "start the server with --psk-file, or drop --psk-file / RDMACHECK_PSK_FILE here";
      break;
    case AuthFailure::kNotAllowed:
      id = FindingId::kAuthNotAllowed;
      summary = fmt::format("{} does not admit this host: its --allow list leaves it out", o.host);
      fix = "add this host's address to the server's --allow, or test from an allowed host";
      break;
    case AuthFailure::kForeign:
      id = FindingId::kNotRdmacheckServe;
      summary = fmt::format(
          "something on {}:{} accepted the connection but is not `rdmacheck serve`: it answered "
          "outside rdmacheck's framing, or closed at once",
          o.host, o.tcp_port);
      fix = fmt::format(
          "check -p / the port: `rdmacheck serve` listens on {} unless given -p; on the server, "
          "`ss -ltnp 'sport = :{}'` names what listens on {}",
          proto::kDefaultPort, o.tcp_port, o.tcp_port);
      break;
    case AuthFailure::kSilent:
      id = FindingId::kNoGreeting;
      summary = fmt::format(
          "something on {}:{} accepted the connection but sent no greeting: it is not this "
          "version's `rdmacheck serve`, or the path lost everything after the TCP handshake",
          o.host, o.tcp_port);
      fix = fmt::format(
          "on the server, `ss -ltnp 'sport = :{}'` names what listens: another service means "
          "check -p / the port; an rdmacheck older than protocol version 2 (it waits for the "
          "client to speak first) means the same rdmacheck version on both hosts; this "
          "version's `rdmacheck serve` means the path dropped its greeting: run the command "
          "again and watch the link (ping -i 0.2 {} shows the gaps of a flapping link)",
          o.tcp_port, o.host);
      break;
    case AuthFailure::kNone:
    case AuthFailure::kProtocol:
      summary = fmt::format("{} speaks rdmacheck's framing but the greeting failed", o.host);
      fix = "run the same rdmacheck version on both hosts; check the server's log";
      break;
  }
  Finding f = make_finding(id, Severity::kFail, Layer::kConnection, summary);
  f.evidence.push_back(o.error);
  f.fix = fix;
  return f;
}

}  // namespace

std::string why_selection_fails(const UserSelection& u, const std::optional<proto::HostFacts>& peer,
                                const std::string& open_error) {
  if (!u.any() || !u.automatic) return {};
  const Selection& a = *u.automatic;
  if (!u.forced) return "it could not be used: " + open_error;
  const Selection& s = *u.forced;
  if (u.port && s.port_state != "ACTIVE") {
    return fmt::format("port {} is {}: nothing is sent or received on it", s.port,
                       s.port_state.empty() ? "not ACTIVE" : s.port_state);
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
    return fmt::format("it is a {} GID and the path needs {} ({})", s.gid_type, a.gid_type,
                       s.gid_type == "RoCE v1"
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

int answered_round_trips(const ConnObservation& o) {
  return o.pings_ok + static_cast<int>(std::count_if(o.ladder.begin(), o.ladder.end(),
                                                     [](const LadderResult& l) { return l.ok; }));
}

std::vector<Finding> diagnose(const ConnObservation& o) {
  std::vector<Finding> out;
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
        f.fix =
            "check that rdmacheck serve runs on the peer with the same port (and version), and "
            "that its --allow list admits the address the request comes from (--src)";
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
  return out;
}

}  // namespace rdmacheck::conn
