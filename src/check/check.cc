#include "check/check.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>

#include "conn/client_session.h"
#include "conn/tcp_probe.h"
#include "doctor/doctor.h"
#include "doctor/sources.h"
#include "net/tcp.h"
#include "perf/counters.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::check {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::milliseconds;

std::string hostname() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

void merge(LayerReport& layer, Finding f) { merge_finding(layer.findings, std::move(f)); }

// About one port ("dev/port"): which port the server uses is known only after layer 2.
bool is_port_finding(const Finding& f) { return f.subject.find('/') != std::string::npos; }

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

LayerReport& layer(CheckReport& r, Layer l) { return r.layers[static_cast<size_t>(l)]; }

// The server's own doctor findings, asked over the handshake; or, when the
// server could not be reached or is not rdmacheck, what that was (the
// connection layer's findings: the pings would only wait out the same).
struct PeerDoctor {
  std::optional<proto::DoctorReport> report;
  std::vector<Finding> unreached;
  std::vector<std::string> retried;  // conn::connect_to_server's note: a greeting came late
};

PeerDoctor ask_peer_doctor(const CheckOptions& o, Deadline d) {
  std::vector<std::string> retried;
  auto sock = conn::connect_to_server(o.target, d, &retried);
  if (!sock) {
    const conn::SessionFailure& f = sock.error();
    conn::ConnObservation obs;
    obs.host = o.target.host;
    obs.tcp_port = o.target.tcp_port;
    obs.failed = f.stage;
    obs.errnum = f.error.errnum;
    obs.error = f.error.message();
    obs.server_refused = f.server_refused;
    obs.auth = f.auth;
    return {std::nullopt, conn::diagnose(obs)};
  }
  if (!send_frame(*sock, proto::doctor_request(), d)) return {};
  auto reply = recv_frame(*sock, d, 1u << 20);
  if (!reply) return {};
  auto rep = proto::parse_doctor_report(*reply);
  if (!rep) return {};
  return {*rep, {}, std::move(retried)};
}

void finish_layer(LayerReport& l, Clock::time_point t0) {
  l.status = status_of(l.findings);
  l.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
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

void not_run(CheckReport& r, size_t from, const std::string& why) {
  for (size_t i = from; i < r.layers.size(); ++i) {
    r.layers[i].status = LayerStatus::kNotRun;
    r.layers[i].not_run_reason = why;
  }
}

}  // namespace

// (check.h)
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

std::vector<std::pair<std::string, std::string>> port_states(const doctor::DoctorReport& d) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : d.checks) {
    if (c.check != "port-state") continue;
    for (const auto& [k, v] : c.facts) {
      if (k == "state" && v.is_string()) out.emplace_back(c.subject, v.get<std::string>());
    }
  }
  return out;
}

std::optional<Finding> unfinished_test_finding(const perf::PerfReport& rep, bool layer2_saw_loss) {
  const auto& spec = rep.options.spec;
  if (worst(rep.findings) == Severity::kFail) return std::nullopt;  // it says why itself
  // Layer 2's probes may all pass on a path that loses 1 % of packets (130
  // probes see no loss about a quarter of the time); the test's own counters
  // then are the observation that packets were lost.
  const bool counted_loss = has_finding(rep.findings, FindingId::kPacketLossDuringTest);
  if (rep.failed == conn::Stage::kTraffic &&
      has_finding(rep.findings, FindingId::kTrafficStalled) && rep.stalled_before_failure) {
    // Layer 2 passed before it: a path that stopped for seconds mid-test
    // (traffic-stalled says when) is an outage the test did not outlast.
    Finding f{
        FindingId::kPerfTestFailed, Severity::kWarn, Layer::kPerformance,
        fmt::format("the {} {} test could not finish: traffic stopped for {:.1f} s in the "
                    "middle of it, after layer 2's probes had got through",
                    name_of(spec.op), name_of(spec.kind), rep.stalled_before_failure->seconds)};
    f.evidence.push_back(rep.error);
    return f;
  }
  if (rep.failed == conn::Stage::kTraffic && (layer2_saw_loss || counted_loss)) {
    // The probes got through: a test that ran out of retries or time under
    // measured loss is what that loss costs, not a dead path.
    Finding f{FindingId::kPerfTestFailed, Severity::kWarn, Layer::kPerformance,
              fmt::format("the {} {} test could not finish under the loss {}: RC's go-back-N "
                          "retransmissions ran out of retries or time",
                          name_of(spec.op), name_of(spec.kind),
                          layer2_saw_loss ? "layer 2 measured" : "its own counters show")};
    f.evidence.push_back(rep.error);
    return f;
  }
  Finding f{FindingId::kPerfTestFailed, Severity::kFail, Layer::kPerformance,
            fmt::format("the {} {} test failed at {}", name_of(spec.op), name_of(spec.kind),
                        name_of(rep.failed))};
  f.evidence.push_back(rep.error);
  return f;
}

std::vector<perf::Spec> perf_plan(const CheckOptions& o) {
  using perf::Kind;
  using perf::Op;
  // The baseline; --full runs every operation in every size.
  static const std::vector<std::pair<Kind, Op>> kBaseline = {{Kind::kBw, Op::kWrite},
                                                             {Kind::kLat, Op::kWrite},
                                                             {Kind::kLat, Op::kSend},
                                                             {Kind::kBw, Op::kRead}};
  static const std::vector<std::pair<Kind, Op>> kFull = {
      {Kind::kBw, Op::kWrite},  {Kind::kBw, Op::kRead},  {Kind::kBw, Op::kSend},
      {Kind::kLat, Op::kWrite}, {Kind::kLat, Op::kSend}, {Kind::kLat, Op::kRead}};
  std::vector<perf::Spec> plan;
  for (const auto& [kind, op] : o.full ? kFull : kBaseline) {
    perf::Spec s{.kind = kind, .op = op};
    if (kind == Kind::kBw) {  // 2 s a size after 0.5 s of warm-up
      s.sizes = o.full ? perf::all_sizes(1u << 20) : std::vector<uint32_t>{65536};
      s.iterations = 0;
      s.duration_s = 2;
      s.warmup_s = 0.5;
      s.cpu_util = true;  // next to the TCP reference's CPU: what RDMA saves
    } else {              // 200 round trips a size, one at a time
      s.sizes = o.full ? perf::all_sizes(4096) : std::vector<uint32_t>{64};
      s.iterations = 200;
      s.tx_depth = 1;
      s.histogram = true;  // the HTML page draws it; the text shows only the figures
    }
    plan.push_back(std::move(s));
  }
  return plan;
}

CheckReport run_check(const CheckOptions& o, const std::atomic<bool>& stop) {
  CheckReport r;
  r.options = o;
  for (auto l : {Layer::kDevice, Layer::kConnection, Layer::kPerformance}) {
    r.layers.push_back(LayerReport{l});
  }
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  const std::string me = hostname();
  auto expired = [&](const std::string& step) {
    if (Clock::now() < end && !stop.load()) return false;
    r.expired_in = stop.load() ? step + " (interrupted)" : step;
    return true;
  };
  auto done = [&]() {
    r.elapsed_ms = Millis(Clock::now() - start).count();
    return r;
  };

  // Layer 1: both hosts' doctors. Their connection- and performance-layer
  // findings wait for the layers that prove them.
  auto t1 = Clock::now();
  const FsRoot& fs = o.target.fs;
  auto sources = doctor::sources_for(fs);
  const auto local_doc = doctor::run_doctor(fs, *sources);
  r.local_doctor = doctor::to_json(local_doc);
  std::vector<Finding> deferred;
  // Without -d the route towards the peer picks the device, and only the
  // connection layer says which: this host's port findings wait for it, as
  // the peer's do (on a host with several NICs the first ACTIVE port is often
  // not the one the route uses).
  const auto local_port_states = port_states(local_doc);
  const bool known = port_known_before_connection(o.target.dev);
  std::vector<Finding> local_ports;
  std::vector<Finding> local_findings = local_doc.findings();
  if (known)
    scope_to_port(local_findings, tested_port(std::nullopt, local_port_states, o.target.dev));
  for (auto f : local_findings) {
    f.host = me;
    if (f.layer == Layer::kDevice && !known && is_port_finding(f)) {
      local_ports.push_back(std::move(f));
    } else if (f.layer == Layer::kDevice) {
      merge(layer(r, Layer::kDevice), std::move(f));
    } else {
      deferred.push_back(std::move(f));
    }
  }
  auto judge_ports = [&] {
    scope_to_port(local_ports, tested_port(r.local, local_port_states, o.target.dev));
    for (auto& f : local_ports) merge(layer(r, Layer::kDevice), std::move(f));
    local_ports.clear();
  };
  if (expired("the device layer")) {
    judge_ports();
    not_run(r, 0, "the deadline passed during " + r.expired_in);
    return done();
  }
  // The peer's port findings wait for the connection layer to say which port
  // its server uses; without that answer they count as they are.
  std::vector<Finding> peer_ports;
  auto asked = ask_peer_doctor(o, std::min(end, deadline_in(std::chrono::seconds(30))));
  if (!asked.unreached.empty()) {
    // Named now, within the connection's own timeout: the layers after it
    // would reach the same nothing.
    judge_ports();
    finish_layer(layer(r, Layer::kDevice), t1);
    for (auto& f : asked.unreached) merge(layer(r, Layer::kConnection), std::move(f));
    finish_layer(layer(r, Layer::kConnection), t1);
    not_run(r, 2, fmt::format("{} could not be asked for its doctor", o.target.host));
    return done();
  }
  for (const auto& w : asked.retried) {
    merge(layer(r, Layer::kConnection),
          Finding{FindingId::kPingWarning, Severity::kWarn, Layer::kConnection, w});
  }
  if (auto& peer = asked.report) {
    r.peer_doctor = to_json(peer->findings);
    for (auto f : peer->findings) {
      f.host = peer->hostname;
      if (f.layer == Layer::kDevice && is_port_finding(f)) {
        peer_ports.push_back(std::move(f));
      } else if (f.layer == Layer::kDevice) {
        merge(layer(r, Layer::kDevice), std::move(f));
      } else {
        deferred.push_back(std::move(f));
      }
    }
  }
  finish_layer(layer(r, Layer::kDevice), t1);
  if (layer(r, Layer::kDevice).status == LayerStatus::kFail) {
    judge_ports();
    for (auto& f : peer_ports) merge(layer(r, Layer::kDevice), std::move(f));
    finish_layer(layer(r, Layer::kDevice), t1);
    not_run(r, 1, "the device layer failed");
    return done();
  }

  // The priority of the RDMA tests' packets: -T/-S as given, else the class
  // this host's doctor read as configured for RoCE (PFC, trust, DSCP map).
  conn::Target target = o.target;
  if (o.priority_given) {
    r.priority = {.traffic_class = target.traffic_class,
                  .sl = target.sl,
                  .source = PrioritySource::kUser,
                  .why = "given with -T/-S"};
  } else {
    r.priority = priority_from_doctor(
        r.local_doctor,
        port_under_test(port_states(local_doc), o.target.dev.device, o.target.dev.ib_port));
    target.traffic_class = r.priority.traffic_class;
    target.sl = r.priority.sl;
  }

  // Layer 2: RC ping with the size ladder, UD ping, rdma_cm.
  auto t2 = Clock::now();
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
    return done();
  }
  if (layer(r, Layer::kConnection).status == LayerStatus::kFail) {
    not_run(r, 2, "the connection layer failed");
    return done();
  }

  // Layer 3: the baseline.
  if (o.quick) {
    not_run(r, 2, "--quick");
    return done();
  }
  auto t3 = Clock::now();
  // Under loss every lost packet of a latency round trip waits out an ACK
  // timeout: fewer round trips keep the layer in its time while still
  // showing what the loss costs.
  bool lossy = std::any_of(r.pings.begin(), r.pings.end(), [](const conn::PingReport& p) {
    return std::any_of(p.probes.begin(), p.probes.end(),
                       [](const conn::ProbeTally& t) { return t.lost() > 0 || t.slow > 0; });
  });
  // The round trip the pings measured: a latency test is round trips one at a
  // time, and on a long path (200 ms) its 200 would outlast the test's time.
  double path_rtt_us = 0;
  for (const auto& p : r.pings) {
    if (p.stats.received > 0) path_rtt_us = std::max(path_rtt_us, p.stats.median);
  }
  for (auto spec : perf_plan(o)) {
    if (lossy && spec.kind == perf::Kind::kLat) {
      spec.iterations = std::min<uint64_t>(spec.iterations, 50);
    }
    if (spec.kind == perf::Kind::kLat && path_rtt_us > 0) {  // about 10 s a size, at least 20
      const auto fit = static_cast<uint64_t>(10e6 / path_rtt_us);
      spec.iterations = std::min<uint64_t>(spec.iterations, std::max<uint64_t>(fit, 20));
    }
    if (expired(fmt::format("{} {}", name_of(spec.op), name_of(spec.kind)))) break;
    perf::PerfOptions po;
    po.target = target;
    po.spec = spec;
    // One test may not take the whole budget: under heavy loss, go-back-N
    // recovery with 1 s ACK timeouts can take minutes.
    po.timeout = std::min(milliseconds(30000), milliseconds(std::max(ms_left(end), 1)));
    r.perf.push_back(perf::run_perf(po, stop));
    const auto& rep = r.perf.back();
    for (auto f : rep.findings) {
      // Several tests raise the same counter finding: each line says which test it was.
      for (auto& e : f.evidence) {
        if (!perf::is_counter_finding(f.id)) break;
        e = fmt::format("{} {}: {}", name_of(spec.op), name_of(spec.kind), e);
      }
      merge(layer(r, Layer::kPerformance), std::move(f));
    }
    if (rep.ok) continue;
    auto unfinished = unfinished_test_finding(rep, lossy);
    const bool go_on = unfinished && unfinished->severity == Severity::kWarn;
    if (unfinished) merge(layer(r, Layer::kPerformance), std::move(*unfinished));
    if (!go_on) break;
    lossy = true;  // the next latency tests run fewer round trips
  }
  // TCP between the same addresses, next to RDMA's figures: the path's own
  // rate and round trip, and what each side's CPU pays for them.
  if (!expired("the TCP reference")) {
    perf::TcpBaselineOptions tb;
    tb.target = o.target;
    tb.seconds = lossy ? 1 : 2;
    tb.timeout = std::min(milliseconds(15000), milliseconds(std::max(ms_left(end), 1)));
    r.tcp_baseline = perf::run_tcp_baseline(tb);
  }
  for (auto& f : deferred) {
    if (f.layer == Layer::kPerformance) merge(layer(r, Layer::kPerformance), f);
  }
  finish_layer(layer(r, Layer::kPerformance), t3);
  if (!r.expired_in.empty()) layer(r, Layer::kPerformance).status = LayerStatus::kFail;
  return done();
}

}  // namespace rdmacheck::check
