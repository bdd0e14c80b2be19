#include "perf/counters.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>

namespace rdmacheck::perf {
namespace {

// What each counter means, by the names drivers give them (rxe, mlx5, bnxt_re,
// InfiniBand port counters). A retransmission alone does not say whether the
// request or its ACK went missing; the responder's counters do.
//
// A gap in the request stream, or a NAK for one: requests were lost.
// (sysfs/port_counters.h: is_sequence_gap_counter)
// Retries ran out: the QP went to ERROR.
constexpr std::array kRetryExceeded = {"retry_exceeded_err", "req_transport_retries_exceeded"};
// The requester's ACK timer fired and it retransmitted.
constexpr std::array kTimeout = {"completer_retry_err", "local_ack_timeout_err", "to_retransmits"};
// The responder saw a request again that it had already executed: the request
// arrived, the ACK for it did not come back in time.
constexpr std::array kDuplicate = {"duplicate_request", "dup_req"};
// Receiver not ready: RNR NAKs sent or received, RNR retries exhausted.
constexpr std::array kRnr = {"rcvd_rnr_err", "send_rnr_err", "retry_rnr_exceeded_err",
                             "rnr_nak_retry_err", "rnr_naks_rcvd"};
// Errors on the physical link (InfiniBand port counters) and slow restarts.
constexpr std::array kLink = {"port_rcv_errors", "port_xmit_discards", "symbol_error",
                              "link_error_recovery", "roce_slow_restart"};

constexpr std::array kCongestion = {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets",
                                    "rp_cnp_ignored", "port_xmit_wait"};

// Rates from which a cause WARNs (per million packets). Lost requests hurt most
// (go-back-N resends everything after them; above 0.1 % throughput collapses),
// so loss warns an order of magnitude before that. A late ACK costs one timeout
// and no resent data after it: one in a short healthy test is not worth a warning.
constexpr double kLossWarnPpm = 100;
constexpr double kAckLateWarnPpm = 10000;
constexpr double kRnrWarnPpm = 1000;
// Copies made by the network cost the receiver little; many of them say
// something on the path duplicates frames.
constexpr double kCopiesWarnPpm = 1000;

std::string leaf(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

template <size_t N>
bool in(const std::array<const char*, N>& names, const std::string& name) {
  const std::string l = leaf(name);
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return l == n; });
}

bool is_seq_gap(const std::string& n) {
  return is_sequence_gap_counter(n) || in(kRetryExceeded, n);
}
bool is_timeout(const std::string& n) { return in(kTimeout, n); }
bool is_duplicate(const std::string& n) { return in(kDuplicate, n); }
bool is_retransmission(const std::string& n) { return is_timeout(n) || is_duplicate(n); }
bool is_rnr(const std::string& n) { return in(kRnr, n); }
bool is_link(const std::string& n) { return in(kLink, n); }
bool is_loss_evidence(const std::string& n) {
  return is_seq_gap(n) || is_retransmission(n) || is_link(n);
}

std::string evidence(const Counters& d, const std::string& host, bool (*pick)(const std::string&)) {
  std::string out;
  for (const auto& [name, v] : d) {
    if (!pick(name)) continue;
    out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, v);
  }
  return out.empty() ? "" : host + ": " + out;
}

uint64_t sum(const Counters& d, bool (*pick)(const std::string&)) {
  uint64_t s = 0;
  for (const auto& [name, v] : d) {
    if (pick(name)) s += v;
  }
  return s;
}

}  // namespace

bool is_loss_counter(const std::string& name) { return is_loss_evidence(name); }
bool is_congestion_counter(const std::string& name) { return in(kCongestion, name); }

uint64_t packets(const Counters& d) {
  uint64_t p = 0;
  for (const char* n : {"hw_counters/sent_pkts", "hw_counters/rcvd_pkts",
                        "counters/port_xmit_packets", "counters/port_rcv_packets"}) {
    if (auto it = d.find(n); it != d.end()) p += it->second;
  }
  return p;
}

bool is_counter_finding(FindingId id) {
  return id == FindingId::kPacketLossDuringTest || id == FindingId::kAckLate ||
         id == FindingId::kPacketsDuplicated || id == FindingId::kReceiverNotReadyDuringTest ||
         id == FindingId::kCongestionDuringTest;
}

namespace {

using Pick = bool (*)(const std::string&);

// Both sides' counters of one test, and the packets they are a rate of.
class Sides {
 public:
  Sides(const Counters& local, const Counters& peer, const std::string& local_host,
        const std::string& peer_host, uint64_t fallback_packets)
      : local(local), peer(peer), local_host_(local_host), peer_host_(peer_host) {
    // Each packet is counted once sent and once received; half the sum of both
    // sides is the number of packets on the wire.
    pkts_ = (packets(local) + packets(peer)) / 2;
    counted_ = pkts_ > 0;
    if (!counted_) pkts_ = fallback_packets;
  }
  [[nodiscard]] uint64_t total(Pick pick) const { return sum(local, pick) + sum(peer, pick); }
  [[nodiscard]] const std::string& host_of(const Counters* side) const {
    return side == &local ? local_host_ : peer_host_;
  }
  // A finding of EVENTS over the test's packets: a WARN from WARN_PPM on, or
  // whenever the rate is unknown (nothing counted: the events alone are
  // worth a warning); each side's counters that PICK selects are its evidence.
  [[nodiscard]] Finding finding(FindingId id, uint64_t events, double warn_ppm,
                                const std::string& what, Pick pick, const std::string& fix) const {
    const double ppm =
        pkts_ > 0 ? static_cast<double>(events) * 1e6 / static_cast<double>(pkts_) : 0.0;
    Finding f;
    f.id = id;
    f.layer = Layer::kPerformance;
    f.severity = pkts_ == 0 || ppm >= warn_ppm ? Severity::kWarn : Severity::kInfo;
    f.summary = fmt::format(
        "{}: {} events during the test, {:.0f} per million packets ({} {})", what, events, ppm,
        pkts_, counted_ ? "packets counted by the ports" : "messages, no packet counter");
    for (const auto* side : {&local, &peer}) {
      const std::string e = evidence(*side, host_of(side), pick);
      if (!e.empty()) f.evidence.push_back(e);
    }
    f.fix = fix;
    return f;
  }

  const Counters& local;
  const Counters& peer;

 private:
  const std::string& local_host_;
  const std::string& peer_host_;
  uint64_t pkts_ = 0;
  bool counted_ = false;
};

// The retransmission events of a test, each given to one cause.
struct Events {
  uint64_t gaps = 0, timeouts = 0, link = 0;
  uint64_t copies_to_local = 0, copies_to_peer = 0;  // made by the network
  uint64_t dups = 0;                                 // the duplicates that are retransmissions
  uint64_t lost_tail = 0;
  bool peer_known = false;
  [[nodiscard]] uint64_t copies() const { return copies_to_local + copies_to_peer; }
  [[nodiscard]] bool loss() const {
    return gaps + link + lost_tail > 0 || (timeouts > 0 && !peer_known);
  }
};

Events events_of(const Sides& s) {
  Events e;
  e.gaps = s.total(is_seq_gap);
  e.timeouts = s.total(is_timeout);
  e.link = s.total(is_link);
  // A responder's duplicates are the other side's retransmissions, unless
  // that side retransmitted nothing: then every one is a copy the network
  // made (a port mirror fed back, a switching loop, bonding in broadcast
  // mode, netem duplicate), and neither a late ACK nor a loss.
  // A sequence gap or NAK anywhere rules that out: go-back-N after a NAK
  // (loss, reordering) resends requests without an ACK timeout.
  e.peer_known = !s.peer.empty();
  const bool clean_sequence = e.gaps == 0 && e.link == 0;
  if (e.peer_known && clean_sequence) {
    if (sum(s.peer, is_timeout) == 0) e.copies_to_local = sum(s.local, is_duplicate);
    if (sum(s.local, is_timeout) == 0) e.copies_to_peer = sum(s.peer, is_duplicate);
  }
  e.dups = s.total(is_duplicate) - e.copies();
  // A timeout the responder did not see twice is a request that never arrived
  // (the last one of a burst leaves no gap behind it). Without the peer's
  // counters that cannot be told apart, so it counts as loss.
  e.lost_tail = e.timeouts > e.dups && e.peer_known ? e.timeouts - e.dups : 0;
  return e;
}

Finding duplicated(const Sides& s, const Events& e) {
  Finding f = s.finding(
      FindingId::kPacketsDuplicated, e.copies(), kCopiesWarnPpm,
      "the network delivered copies of packets that were sent once (the receiver saw "
      "duplicates, the sender retransmitted nothing)",
      is_duplicate,
      "find what copies frames on the path: a port mirror (SPAN) looped back, a switching "
      "loop, bonding or teaming in broadcast mode, a tc/netem duplicate rule; copies cost the "
      "receiver work and, in bulk, bandwidth");
  for (const auto& [to, from, n] : {std::tuple{&s.local, &s.peer, e.copies_to_local},
                                    std::tuple{&s.peer, &s.local, e.copies_to_peer}}) {
    if (n > 0) {
      f.evidence.push_back(
          fmt::format("{} saw {} duplicate requests while {} retransmitted nothing", s.host_of(to),
                      n, s.host_of(from)));
    }
  }
  return f;
}

Finding lost(const Sides& s, const Events& e) {
  const uint64_t events = e.gaps + e.link + (e.peer_known ? e.lost_tail : e.timeouts);
  return s.finding(
      FindingId::kPacketLossDuringTest, events, kLossWarnPpm,
      e.peer_known ? "requests were lost on the way (sequence gaps, NAKs or unanswered "
                     "retransmissions)"
                   : "packets were retransmitted (the peer's counters were not available to "
                     "tell lost requests from late ACKs)",
      is_loss_evidence,
      "RoCE retransmits everything after a loss (go-back-N): find the drops (switch port "
      "counters, ethtool -S, netem/tc), and make the path lossless: PFC + ECN, RoCE traffic in "
      "its own priority");
}

Finding ack_late(const Sides& s, const Events& e) {
  return s.finding(
      FindingId::kAckLate, std::max(e.dups, e.timeouts), kAckLateWarnPpm,
      "requests were retransmitted although they had arrived (the receiver saw duplicates, "
      "no sequence gap): their ACKs or read responses came back late, out of order, or "
      "not at all",
      is_retransmission,
      "each late ACK costs one ACK timeout of waiting; a timeout shorter than the path's "
      "round trip (busy or emulated hosts) causes it, so does loss on the return path, and "
      "reordering on it (a requester that sees responses out of order asks again): check "
      "the reverse direction's drops and reordering (ECMP, bonding) and the QP's timeout "
      "(rdmacheck picks it from the round trip)");
}

}  // namespace

std::vector<Finding> counter_findings(const Counters& local, const Counters& peer,
                                      const std::string& local_host, const std::string& peer_host,
                                      uint64_t fallback_packets) {
  const Sides s(local, peer, local_host, peer_host, fallback_packets);
  const Events e = events_of(s);
  std::vector<Finding> out;
  if (e.copies() > 0) out.push_back(duplicated(s, e));
  if (e.loss()) {
    out.push_back(lost(s, e));
  } else if (e.dups > 0 || e.timeouts > 0) {
    out.push_back(ack_late(s, e));
  }
  if (const uint64_t rnr = s.total(is_rnr); rnr > 0) {
    out.push_back(s.finding(FindingId::kReceiverNotReadyDuringTest, rnr, kRnrWarnPpm,
                            "the receiver had no receive buffer posted (RNR NAKs)", is_rnr,
                            "the receiving side must keep enough receives posted (a deeper "
                            "receive queue); RNR waits stall the sender for the RNR timer each "
                            "time"));
  }
  if (const uint64_t cong = s.total(is_congestion_counter); cong > 0) {
    out.push_back(s.finding(FindingId::kCongestionDuringTest, cong, 0,
                            "the path signalled congestion", is_congestion_counter,
                            "check ECN/PFC configuration and what else shares the path; spread "
                            "the load"));
  }
  return out;
}

}  // namespace rdmacheck::perf
