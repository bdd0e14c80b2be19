#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <tuple>

#include "conn/device_choice.h"
#include "conn/diagnose_rules.h"
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

// What the rules below share: the firewall rules that match RoCE, where the
// size ladder broke, and whether the MTUs differ.
struct Loss {
  FirewallRules fw;
  const LadderResult* last_ok = nullptr;
  const LadderResult* first_bad = nullptr;
  bool mtu_differs = false;
  bool some_passed = false;     // a ping or a ladder step was answered
  bool frames_arrived = false;  // the responder NAKed packets as out of sequence
};

Loss loss_of(const ConnObservation& o) {
  Loss l{firewall_rules(o)};
  std::tie(l.last_ok, l.first_bad) = ladder_break(o);
  l.mtu_differs = o.local && o.peer && o.local->netdev_mtu != 0 && o.peer->netdev_mtu != 0 &&
                  o.local->netdev_mtu != o.peer->netdev_mtu;
  l.some_passed = o.pings_ok > 0 || l.last_ok != nullptr;
  l.frames_arrived = o.seq_gaps > 0;
  return l;
}

std::string mtu_evidence(const ConnObservation& o) {
  return fmt::format("netdev MTU {} here, {} on {}", o.local->netdev_mtu, o.peer->netdev_mtu,
                     o.host);
}

// Small messages pass, large ones die, and a rule matches RoCE: the rule (by
// length, most often) is the cause and the black hole its consequence.
Finding firewall_cuts_large(const ConnObservation& o, const Loss& l) {
  Finding f = make_finding(
      FindingId::kFirewallBlocksSomeRoce, Severity::kFail, Layer::kConnection,
      fmt::format("a firewall rule drops some RoCE v2 (UDP 4791) packets: messages up to {} "
                  "bytes pass, {} bytes fail",
                  l.last_ok != nullptr ? l.last_ok->size : 0, l.first_bad->size));
  for (const auto* rules : {&l.fw.some, &l.fw.all}) {
    f.evidence.insert(f.evidence.end(), rules->begin(), rules->end());
  }
  f.evidence.push_back(fmt::format("{} B: {}", l.first_bad->size, l.first_bad->error));
  if (l.mtu_differs) f.evidence.push_back(mtu_evidence(o));
  f.fix =
      "delete the rule or exempt RoCE from it: nft insert rule inet filter input udp dport 4791 "
      "accept (iptables -I INPUT -p udp --dport 4791 -j ACCEPT) on the host whose rule is shown";
  return f;
}

// Nothing was answered and a rule matches RoCE.
Finding firewall_blocks(const ConnObservation& o, const Loss& l) {
  const bool all = !l.fw.all.empty();
  Finding f = make_finding(
      all ? FindingId::kFirewallBlocksRoce : FindingId::kFirewallBlocksSomeRoce, Severity::kFail,
      Layer::kConnection,
      all ? "a firewall drops RoCE v2 (UDP 4791): the TCP handshake passed but no RDMA packet "
            "was acknowledged"
          : "no RDMA packet was acknowledged, and a firewall rule matches some RoCE v2 (UDP "
            "4791) packets (see what it matches)");
  f.evidence = l.fw.all;
  f.evidence.insert(f.evidence.end(), l.fw.some.begin(), l.fw.some.end());
  f.evidence.push_back(loss_evidence(o));
  f.fix = "iptables -I INPUT -p udp --dport 4791 -j ACCEPT (on the host whose rule is shown)";
  return f;
}

// The two sides' GIDs: of different types, or (a warning) in different subnets.
void gid_findings(const ConnObservation& o, std::vector<Finding>& out) {
  if (!o.local || !o.peer) return;
  if (o.local->gid_type != o.peer->gid_type) {
    Finding f = make_finding(FindingId::kGidTypeMismatch, Severity::kFail, Layer::kConnection,
                             "the two sides use different GID types");
    f.evidence.push_back(fmt::format("this host: index {} {} {}", o.local->gid_index,
                                     o.local->gid_type, o.local->gid));
    f.evidence.push_back(fmt::format("{}: index {} {} {}", o.host, o.peer->gid_index,
                                     o.peer->gid_type, o.peer->gid));
    f.fix = "use the RoCE v2 GID of the right address on both sides (-x N; see rdmacheck devices)";
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
void mtu_findings(const ConnObservation& o, const Loss& l, std::vector<Finding>& out) {
  if (l.last_ok != nullptr && l.first_bad != nullptr && !l.frames_arrived) {
    Finding f =
        make_finding(FindingId::kMtuBlackHole, Severity::kFail, Layer::kConnection,
                     fmt::format("messages up to {} bytes pass, {} bytes fail: something on "
                                 "the path drops large frames",
                                 l.last_ok->size, l.first_bad->size));
    if (l.mtu_differs) f.evidence.push_back(mtu_evidence(o));
    f.evidence.push_back(fmt::format("{} B: {}", l.first_bad->size, l.first_bad->error));
    f.fix =
        "set the same MTU on both hosts and every switch port (ip link set DEV mtu 9000); check "
        "with ping -M do -s 8972 PEER";
    out.push_back(std::move(f));
  } else if (l.mtu_differs) {
    Finding f = make_finding(FindingId::kMtuMismatch, Severity::kWarn, Layer::kConnection,
                             "the two hosts' netdev MTUs differ");
    f.evidence.push_back(mtu_evidence(o));
    f.fix = "set the same MTU on both hosts and the switch ports between them";
    out.push_back(std::move(f));
  }
}

// No rule above explained the loss with a FAIL: the loss itself, worded by
// how much got through.
Finding loss_unexplained(const ConnObservation& o, const Loss& l) {
  // The summary may not claim "nothing got through" when some round trips did.
  const int answered = answered_round_trips(o);
  Finding f = make_finding(
      FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection,
      answered == 0 ? std::string("the queue pairs reached RTS but no RDMA packet was "
                                  "acknowledged")
                    : fmt::format("{} RDMA round trips were answered, then one was never "
                                  "acknowledged (retries exhausted): RoCE packets were lost{}",
                                  answered, l.frames_arrived ? " or reordered" : ""));
  f.evidence.push_back(loss_evidence(o));
  if (l.frames_arrived) f.evidence.push_back(sequence_gap_evidence(o));
  if (l.fw.empty()) {
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
  return f;
}

}  // namespace

// Causes of "RC QPs reached RTS, packets never acknowledged", ranked by evidence.
void packets_lost(const ConnObservation& o, std::vector<Finding>& out) {
  const Loss l = loss_of(o);
  if (!l.fw.empty() && l.some_passed && l.first_bad != nullptr) {
    out.push_back(firewall_cuts_large(o, l));
    return;
  }
  if (!l.fw.empty() && !l.some_passed) out.push_back(firewall_blocks(o, l));
  gid_findings(o, out);
  mtu_findings(o, l, out);
  const bool explained = std::any_of(
      out.begin(), out.end(), [](const Finding& f) { return f.severity == Severity::kFail; });
  if (!explained) out.insert(out.begin(), loss_unexplained(o, l));
}

}  // namespace rdmacheck::conn
