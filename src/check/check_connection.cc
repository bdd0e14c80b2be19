#include <fmt/core.h>

#include <algorithm>

#include "check/check_run.h"
#include "conn/tcp_probe.h"

namespace rdmacheck::check {
namespace {

using std::chrono::milliseconds;

// What the connection layer's traffic showed, in words; "" when it did not pass.
std::string traffic_passed(const CheckReport& r) {
  if (r.pings.empty()) return {};
  const auto& rc = r.pings.front();
  if (rc.obs.failed != conn::Stage::kDone || rc.obs.pings_ok == 0) return {};
  return fmt::format("{}/{} RC pings{} to {} were answered", rc.obs.pings_ok, rc.obs.pings_sent,
                     rc.obs.ladder.empty() ? "" : " and the size ladder", r.options.target.host);
}

// A forced -d/--ib-port/-x that explains the failure takes the probes'
// warnings about the same selection as its evidence.
void fold_warnings_under_forced_selection(LayerReport& l) {
  auto forced = std::find_if(l.findings.begin(), l.findings.end(), [](const Finding& f) {
    return f.is_any({FindingId::kForcedDeviceUnusable, FindingId::kForcedPortUnusable,
                     FindingId::kForcedGidUnusable}) &&
           f.severity == Severity::kFail;
  });
  if (forced == l.findings.end()) return;
  Finding& top = *forced;
  std::vector<Finding> kept;
  for (auto& f : l.findings) {
    if (&f != &top && f.id == FindingId::kPingWarning) {
      top.evidence.push_back("warned: " + f.summary);
    }
  }
  for (auto& f : l.findings) {
    if (f.id != FindingId::kPingWarning) kept.push_back(std::move(f));
  }
  l.findings = std::move(kept);
}

// UD has no retransmission: when the RC ping to the same peer got through,
// UD datagrams that never came back are not proof of a dead path.
void soften_ud_failure(const conn::PingReport& rc, std::vector<Finding>& ud_findings) {
  if (rc.options.transport != proto::Transport::kRc || rc.obs.failed != conn::Stage::kDone) return;
  for (auto& f : ud_findings) {
    if (f.severity != Severity::kFail) continue;
    f.severity = Severity::kWarn;
    f.evidence.push_back(
        fmt::format("the RC ping to the same peer passed ({}/{}): RC traffic "
                    "gets through, only UD did not",
                    rc.stats.received, rc.stats.sent));
  }
}

// RC ping with the size ladder, UD ping, rdma_cm: the first failure says enough.
void run_pings(CheckRun& run) {
  const CheckOptions& o = run.o;
  CheckReport& r = run.r;
  const conn::Target& target = run.target;
  const Deadline end = run.end;
  auto expired = [&](const std::string& step) { return run.expired(step); };
  std::vector<conn::PingOptions> pings;
  conn::PingOptions rc;
  rc.target = target;
  // Rates, not single shots: enough probes to tell 0 %, a few percent and
  // 100 % apart. RC retransmits, so its probes show loss as ACK timeouts;
  // UD's show the raw datagram loss.
  rc.count = 30;
  rc.interval_s = 0;
  pings.push_back(rc);
  conn::PingOptions ud = rc;
  ud.transport = proto::Transport::kUd;
  ud.count = 100;
  ud.ladder_tries = 5;
  pings.push_back(ud);
  if (o.cm) {
    conn::PingOptions cm = rc;
    cm.cm = true;
    cm.ladder = false;
    pings.push_back(cm);
  }
  for (auto& p : pings) {
    if (expired(fmt::format("the {} ping", p.cm ? "rdma_cm" : name_of(p.transport)))) break;
    p.timeout = std::min(conn::kPingTimeout, milliseconds(std::max(ms_left(end), 1)));
    r.pings.push_back(conn::run_ping(p));
    auto& rep = r.pings.back();
    if (!r.local && rep.obs.local) r.local = rep.obs.local;
    if (!r.peer && rep.obs.peer) r.peer = rep.obs.peer;
    if (rep.obs.failed == conn::Stage::kTraffic && !p.cm && p.transport == proto::Transport::kUd) {
      soften_ud_failure(r.pings.front(), rep.findings);
    }
    for (auto f : rep.findings) merge(layer(r, Layer::kConnection), std::move(f));
    for (const auto& w : rep.warnings) {
      Finding f{FindingId::kPingWarning, Severity::kWarn, Layer::kConnection, w};
      merge(layer(r, Layer::kConnection), std::move(f));
    }
    // The rdma_cm ping on another device than the verbs ping: that is the
    // cause, and what the rdma_cm ping reported its consequence (unless the
    // ping itself already put its failure down to --src).
    const bool src_blamed = has_finding(rep.findings, FindingId::kCmDeviceDiffers);
    if (p.cm && !r.pings.empty() && !src_blamed) {
      if (auto d = cm_device_differs(r.pings.front(), rep)) {
        auto& l2 = layer(r, Layer::kConnection).findings;
        for (auto it = l2.begin(); it != l2.end();) {
          const bool from_cm = std::any_of(rep.findings.begin(), rep.findings.end(),
                                           [&](const Finding& f) { return same_id(f, *it); });
          if (!from_cm || d->severity != Severity::kFail) {
            ++it;
            continue;
          }
          d->evidence.push_back(fmt::format("consequence: {} {}: {}", severity_name(it->severity),
                                            id_name(*it), it->summary));
          it = l2.erase(it);
        }
        merge(layer(r, Layer::kConnection), std::move(*d));
      }
    }
    if (rep.obs.failed != conn::Stage::kDone) break;  // the first failure says enough
  }
}

}  // namespace

// Beside a dead RoCE path (a FAIL: a message lost on every one of its
// retries) clean echoes are strong evidence. Beside a loss rate they prove
// little: 20 of 20 still allow about 16 % loss per round trip, so TCP
// counts as clean only where its upper bound lies below the lower bound of
// the loss the RoCE probes measured; otherwise the probe says it cannot tell.
void add_tcp_evidence(const conn::TcpProbeReport& tcp, const std::vector<conn::PingReport>& pings,
                      std::vector<Finding>& fs) {
  if (!tcp.connected) return;
  double roce_low = 0;  // the least loss per round trip the RoCE probes prove
  for (const auto& p : pings) {
    for (const auto& t : p.probes) roce_low = std::max(roce_low, t.loss().low);
  }
  const double tcp_high = tcp.tally.loss().high;
  for (auto& f : fs) {
    if (f.severity != Severity::kFail && f.id != FindingId::kRoceLoss) continue;
    if (tcp.lossy()) {
      f.evidence.push_back(conn::describe(tcp) +
                           ": TCP between the same addresses loses packets too, so the loss is "
                           "on the path, not RoCE alone");
    } else if (f.is(FindingId::kHandshakeFailed)) {
      // The control connection failed, not RoCE: clean echoes afterwards say
      // the path carries packets now, nothing about RoCE.
      f.evidence.push_back(conn::describe(tcp) +
                           ": TCP between the same addresses is clean now, so whatever stopped "
                           "the handshake has passed or lies above TCP");
    } else if (f.severity == Severity::kFail || tcp_high < roce_low) {
      f.evidence.push_back(conn::describe(tcp) +
                           ": TCP between the same addresses is clean, so the path itself "
                           "carries packets; what is lost is RoCE");
    } else {
      f.evidence.push_back(fmt::format(
          "{}: no TCP echo was lost, but {} echoes allow up to {:.0f} % loss per round trip "
          "(95 %) and the RoCE probes lost at least {:.1f} %: too few to tell loss on the path "
          "from loss of RoCE alone; a longer TCP test between the same addresses (iperf3, "
          "watching its retransmissions) tells them apart",
          conn::describe(tcp), tcp.tally.sent, tcp_high * 100, roce_low * 100));
    }
  }
}

bool fold_retry_exhaustion_into_loss(const conn::PingReport& rc, std::vector<Finding>& layer2) {
  if (rc.options.transport != proto::Transport::kRc || rc.obs.failed != conn::Stage::kTraffic) {
    return false;
  }
  const int answered = conn::answered_round_trips(rc.obs);
  if (answered == 0) return false;  // nothing got through: that is no loss rate
  auto lost = std::find_if(layer2.begin(), layer2.end(), [](const Finding& f) {
    return f.id == FindingId::kRocePacketsLost && f.severity == Severity::kFail;
  });
  auto loss = std::find_if(layer2.begin(), layer2.end(),
                           [](const Finding& f) { return f.id == FindingId::kRoceLoss; });
  // Sequence gaps say the frames arrived: the path carries traffic, out of
  // order or with gaps, even where the probes counted none lost.
  const bool frames_arrived = rc.obs.seq_gaps > 0;
  if (lost == layer2.end() || (loss == layer2.end() && !frames_arrived)) return false;
  // A rule, or another failure, explains the lost messages better than a rate.
  const bool explained = std::any_of(layer2.begin(), layer2.end(), [&](const Finding& f) {
    return f.is_any({FindingId::kFirewallBlocksRoce, FindingId::kFirewallBlocksSomeRoce,
                     FindingId::kFirewallUnreadable}) ||
           (f.severity == Severity::kFail && f.id != FindingId::kRocePacketsLost);
  });
  if (explained) return false;
  const std::string consequence = fmt::format(
      "consequence: after {} answered round trips one RC message ran out of its "
      "retries ({}): at this loss RC connections can break; layer 3 still measures",
      answered, rc.obs.error);
  if (loss != layer2.end()) {
    loss->evidence.push_back(consequence);
    layer2.erase(lost);
    return true;
  }
  // No rate to fold into: the lost message becomes the warning itself.
  Finding f = make_finding(
      FindingId::kRoceLoss, Severity::kWarn, Layer::kConnection,
      fmt::format("RoCE packets to or from {} arrive out of order or with gaps ({}): RC recovers "
                  "by resending from the gap, slowly, and a message can run out of its retries",
                  rc.obs.host, rc.obs.seq_gap_counters));
  f.evidence = lost->evidence;
  f.evidence.push_back(consequence);
  f.fix =
      "find what reorders or drops on the path (per-packet load balancing or ECMP spraying, a "
      "bonding mode other than 802.3ad, switch port and NIC discard counters; rdmacheck doctor on "
      "both hosts): RC needs in-order, lossless delivery (PFC and ECN)";
  *lost = std::move(f);
  return true;
}

// Layer 2: the pings, the TCP reference beside them, then what explains them.
bool connection_layer(CheckRun& run) {
  const CheckOptions& o = run.o;
  CheckReport& r = run.r;
  const Deadline end = run.end;
  auto& deferred = run.deferred;
  auto& peer_ports = run.peer_ports;
  auto expired = [&](const std::string& step) { return run.expired(step); };
  auto judge_ports = [&] { run.judge_ports(); };
  const auto t2 = Clock::now();
  run_pings(run);
  if (!expired("the TCP reference probe")) {
    conn::TcpProbeOptions tp;
    tp.target = o.target;
    tp.timeout = std::min(milliseconds(5000), milliseconds(std::max(ms_left(end), 1)));
    r.tcp_probe = conn::run_tcp_probe(tp);
    add_tcp_evidence(*r.tcp_probe, r.pings, layer(r, Layer::kConnection).findings);
  }
  judge_ports();
  scope_to_port(peer_ports, tested_port(r.peer, {}, {}));
  for (auto& f : peer_ports) merge(layer(r, Layer::kDevice), std::move(f));
  // Observation first: configuration read by the doctors or compared between
  // the hosts explains a failure the probes saw; it never fails a layer whose
  // traffic passed.
  const std::string passed = traffic_passed(r);
  if (r.local && r.peer) {
    for (auto& f : compare_hosts(*r.local, *r.peer, o.target.host)) {
      merge(layer(r, Layer::kDevice), passed.empty() ? f : judged_by_traffic(f, passed));
    }
  }
  layer(r, Layer::kDevice).status = status_of(layer(r, Layer::kDevice).findings);
  fold_warnings_under_forced_selection(layer(r, Layer::kConnection));
  for (auto& f : deferred) {
    if (f.layer != Layer::kConnection) continue;
    auto& l2 = layer(r, Layer::kConnection).findings;
    const bool told = std::any_of(l2.begin(), l2.end(), [&](const Finding& h) {
      return same_id(h, f) && h.host.empty();  // the probe's own finding already names the rule
    });
    if (told) continue;
    merge(layer(r, Layer::kConnection), passed.empty() ? f : judged_by_traffic(f, passed));
  }
  if (!r.pings.empty()) {
    fold_retry_exhaustion_into_loss(r.pings.front(), layer(r, Layer::kConnection).findings);
  }
  fold_under_firewall(layer(r, Layer::kConnection).findings);
  finish_layer(layer(r, Layer::kConnection), t2);
  if (!r.expired_in.empty()) {
    layer(r, Layer::kConnection).status = LayerStatus::kFail;
    not_run(r, 2, "the deadline passed during " + r.expired_in);
    return false;
  }
  if (layer(r, Layer::kConnection).status == LayerStatus::kFail) {
    not_run(r, 2, "the connection layer failed");
    return false;
  }
  return true;
}

}  // namespace rdmacheck::check
