#include "conn/ping.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include "conn/client_session.h"
#include "conn/endpoint.h"
#include "conn/ping_prober.h"
#include "conn/user_selection.h"
#include "doctor/check.h"
#include "host/firewall.h"
#include "net/tcp.h"
#include "sysfs/port_counters.h"

namespace rdmacheck::conn {
namespace {

void fail(PingReport& rep, Stage stage, const Error& e) {
  rep.obs.failed = stage;
  rep.obs.errnum = e.errnum;
  if (stage == Stage::kLocalSetup)
    rep.obs.memlock_limit = effective_memlock_limit(rep.options.target.fs);
  rep.obs.error = e.message();
}

// Marks the QP's final state in the timeline after a failed work request.
void record_qp_state(Endpoint& ep, std::vector<proto::Step>& timeline, const std::string& why) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(ep.qp.get(), &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state == IBV_QPS_ERR) {
    timeline.push_back(proto::Step{"ERROR", 0, false, why});
  }
}

// A TCP-like RTO from the handshake's round trip, at least 250 ms: how long
// an answer may take on this path without anything lost.
std::chrono::milliseconds answer_wait(const PingOptions& o, const AckTimeout& ack) {
  const double rto_ms = ack.rtt ? 4 * (ack.rtt->srtt_us + 4 * ack.rtt->rttvar_us) / 1000 : 0;
  return std::min(o.ping_timeout,
                  std::chrono::milliseconds(static_cast<int64_t>(std::max(250.0, rto_ms))));
}

// How long an RC probe waits for its answer: every try of RC's own
// retransmission timing out, and a second more.
std::chrono::milliseconds rc_answer_wait(const PingOptions& o, const AckTimeout& ack) {
  using std::chrono::milliseconds;
  const auto per_try = milliseconds(static_cast<int64_t>(ack.timeout_ms()) + 1);
  return std::max(o.ping_timeout, (o.timing.retry_cnt + 1) * per_try + milliseconds(1000));
}

// How long one probe may wait. RC retransmits on its own: wait for every try
// to time out before calling it failed. UD has no retransmission: a datagram
// not echoed within answer_wait counts as lost, and probing goes on.
std::chrono::milliseconds probe_wait(const PingOptions& o, const AckTimeout& ack, bool ud,
                                     Deadline end) {
  const auto left = std::chrono::milliseconds(std::max(ms_left(end), 1));
  return std::min(ud ? answer_wait(o, ack) : rc_answer_wait(o, ack), left);
}

// The probes of one ping: COUNT at --size, then the size ladder. Only a
// failed RC work request (its QP is in ERROR then), or a UD size class with
// no answer at all, fails the ping; a lost datagram is counted as loss.
class Probes {
 public:
  Probes(const PingOptions& o, PingReport& rep, Endpoint& ep, const proto::QpInfo& peer,
         bool stamped, Deadline end, std::vector<proto::Step>& local_timeline)
      : o_(o),
        rep_(rep),
        ep_(ep),
        end_(end),
        local_timeline_(local_timeline),
        ud_(o.transport == proto::Transport::kUd),
        transport_(name_of(o.transport)),
        prober_(ep, peer, o.write, stamped),
        // A failed RC message with sequence gaps behind it was not stopped by
        // its size: the packets after a gap arrived (reordering, or loss of some).
        counters_before_(ud_ ? Counters{} : read_counters(ep.fs, ep.device, ep.port)) {}

  void count();
  void ladder(int path_mtu);

 private:
  void note_failure(const RoundTrip& r);
  [[nodiscard]] bool slow(const RoundTrip& r) const {
    return !ud_ && r.rtt_us > 1000 * rep_.ack.timeout_ms();
  }
  // A probe sent without the time for its answer would be counted lost by
  // the deadline, not by the path: on a long path (200 ms) the count may not
  // fit the command's time. What fitted is the measurement.
  [[nodiscard]] bool out_of_time() const { return Clock::now() + answer_wait(o_, rep_.ack) > end_; }
  bool answer_cut_short(const RoundTrip& r, std::chrono::milliseconds wait, int n);

  const PingOptions& o_;
  PingReport& rep_;
  Endpoint& ep_;
  Deadline end_;
  std::vector<proto::Step>& local_timeline_;
  bool ud_;
  std::string transport_;
  Prober prober_;
  Counters counters_before_;
};

void Probes::note_failure(const RoundTrip& r) {
  rep_.obs.failed = Stage::kTraffic;
  rep_.obs.wc_status = r.wc_status;
  rep_.obs.errnum = r.errnum;
  rep_.obs.error = r.error;
  record_qp_state(ep_, local_timeline_, r.error);
  if (!ud_) {
    const Counters d = delta(counters_before_, read_counters(ep_.fs, ep_.device, ep_.port));
    rep_.obs.seq_gaps = sequence_gaps(d);
    rep_.obs.seq_gap_counters = describe_sequence_gaps(d);
  }
}

// An RC send the peer acknowledged whose answer the command's deadline cut
// short of RC's own retries (a lost answer comes back one ACK timeout later,
// 1 s on Soft-RoCE): its answer may still be on its way, so it is no
// evidence that the peer's host stopped answering, nor of loss. Not counted;
// the pings before it are the measurement.
bool Probes::answer_cut_short(const RoundTrip& r, std::chrono::milliseconds wait, int n) {
  if (ud_ || r.ok || !r.acked || wait >= rc_answer_wait(o_, rep_.ack)) return false;
  --rep_.obs.pings_sent;
  rep_.warnings.push_back(
      fmt::format("--timeout: ping {} was acknowledged by the peer, and the command's time ran "
                  "out {} ms later, before RC's retries could bring its answer; not counted",
                  n, wait.count()));
  return true;
}

void Probes::count() {
  std::vector<double> rtts;
  RoundTrip last;
  for (int i = 0; i < o_.count; ++i) {
    if (out_of_time()) {
      if (i == 0) {
        note_failure(RoundTrip{.errnum = ETIMEDOUT, .error = "the command's --timeout expired"});
      } else {
        rep_.warnings.push_back(fmt::format(
            "--timeout: {} of the {} pings fitted in the command's time; the rest were not sent", i,
            o_.count));
      }
      break;
    }
    if (i > 0 && o_.interval_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o_.interval_s));
    }
    ++rep_.obs.pings_sent;
    const auto wait = probe_wait(o_, rep_.ack, ud_, end_);
    last = prober_.run(o_.size, wait);
    if (answer_cut_short(last, wait, i + 1)) break;
    count_probe(rep_.probes, transport_, o_.size, last.ok, slow(last));
    // Ten datagrams and not one back (loss above 72 % at 95 %): dead, stop waiting.
    if (last.lost && rep_.obs.pings_ok == 0 && rep_.obs.pings_sent >= 10) break;
    if (last.lost) continue;
    if (!last.ok) {
      if (last.acked) ++rep_.obs.pings_unanswered;
      note_failure(last);
      break;
    }
    ++rep_.obs.pings_ok;
    rtts.push_back(last.rtt_us);
    rep_.samples.push_back(PingSample{i + 1, o_.size, last.rtt_us, last.turnaround_us});
  }
  rep_.stats = rtt_stats(rtts, rep_.obs.pings_sent);
  if (rep_.obs.failed == Stage::kDone && rep_.obs.pings_sent > 0 && rep_.obs.pings_ok == 0) {
    note_failure(last);  // not one datagram came back: that is a dead path
  }
}

void Probes::ladder(int path_mtu) {
  for (uint32_t size : ladder_sizes(path_mtu, ud_)) {
    if (out_of_time()) {
      rep_.warnings.push_back(
          fmt::format("--timeout: the size ladder stopped before {} B for want of time", size));
      break;
    }
    RoundTrip r;
    for (int t = 0; t < (ud_ ? std::max(o_.ladder_tries, 1) : 1); ++t) {
      r = prober_.run(size, probe_wait(o_, rep_.ack, ud_, end_));
      count_probe(rep_.probes, transport_, size, r.ok, slow(r));
      if (!r.lost || out_of_time()) break;
    }
    if (r.lost && out_of_time()) {
      // Its tries were cut by the deadline: no verdict on this size.
      rep_.warnings.push_back(
          fmt::format("--timeout: the size ladder stopped at {} B for want of time", size));
      break;
    }
    rep_.obs.ladder.push_back(LadderResult{size, r.ok, r.rtt_us, r.error});
    if (!r.ok) {
      note_failure(r);
      break;  // an RC QP is in ERROR now; a UD size class got no answer at all
    }
  }
}

void probe(const PingOptions& o, PingReport& rep, Endpoint& ep, const proto::QpInfo& peer,
           bool stamped, int path_mtu, Deadline end, std::vector<proto::Step>& local_timeline) {
  if (rep.obs.failed != Stage::kDone) return;
  Probes probes(o, rep, ep, peer, stamped, end, local_timeline);
  probes.count();
  if (o.ladder && rep.obs.failed == Stage::kDone) probes.ladder(path_mtu);
}

// What a session that could not be opened tells of the failure.
void observe_failure(PingReport& rep, const SessionFailure& f) {
  fail(rep, f.stage, f.error);
  rep.obs.cm_break = f.cm_break;
  rep.obs.server_refused = f.server_refused;
  rep.obs.refusal_code = f.refusal_code;
  rep.obs.auth = f.auth;
  rep.obs.tcp_resent = f.tcp_resent;
  if (f.stage == Stage::kLocalSetup) {
    rep.obs.no_rdma = doctor::no_rdma_device(rep.options.target.fs);
  }
  rep.obs.local = f.local;
  rep.obs.peer = f.peer;
  rep.warnings = f.warnings;
  rep.local_timeline = f.local_timeline;
}

// The session a ping asks the server for: one QP, a buffer for its size and
// ladder, and UD's size checked against the path MTU before the hello.
SessionRequest ping_request(const PingOptions& o) {
  const bool ud = o.transport == proto::Transport::kUd;
  const auto ladder = ladder_sizes(4096, ud);  // upper bound for the buffer; trimmed below
  SessionRequest req;
  req.test.kind = proto::TestKind::kPing;
  req.test.transport = o.transport;
  req.test.op = o.write ? proto::Op::kWrite : proto::Op::kSend;
  req.test.max_size = std::max<uint32_t>(o.size, o.ladder ? ladder.back() : 0);
  req.test.depth = 1;
  req.test.probe = o.probe && !o.ladder && o.size <= proto::kMaxProbeSize;
  req.recv_slots = ud ? kUdPingRecvSlots : 1;
  req.cm = o.cm;
  req.access = proto::info(req.test.op).remote_access;
  req.timing = o.timing;
  req.ack_timeout = o.ack_timeout;
  // A UD message is one datagram: refuse sizes beyond the path MTU before the hello.
  req.before_hello = [size = o.size, ud](Endpoint& ep) -> Status {
    const int mtu = verbs::mtu_bytes(ep.port_attr.active_mtu);
    if (ud && size > static_cast<uint32_t>(mtu)) {
      return plain_error("ping",
                         fmt::format("a UD message cannot exceed the path MTU ({} bytes)", mtu));
    }
    return ok_status();
  };
  req.forged_gid = o.forged_gid;
  return req;
}

}  // namespace

PingReport run_ping(const PingOptions& o) {
  PingReport rep;
  rep.options = o;
  rep.obs.host = o.target.host;
  rep.obs.tcp_port = o.target.tcp_port;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  // The last part of --timeout is the report's: reading both hosts' firewalls
  // and the farewell that brings the server's side. Connecting and probing end
  // before it, so a failure that waits out its deadline still keeps the promise.
  const auto reserve = std::min<std::chrono::milliseconds>(std::chrono::seconds(5), o.timeout / 3);
  const Deadline work_end = end - reserve;
  auto finish = [&]() {
    rep.findings = diagnose(rep.obs);
    for (auto& f : loss_findings(rep.probes, o.target.host)) rep.findings.push_back(std::move(f));
    rep.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return rep;
  };

  const SessionRequest req = ping_request(o);
  auto opened = open_client_session(o.target, req, work_end);
  // What -d/--ib-port/-x or --src selected against what rdmacheck picks itself.
  observe_choices(rep.obs, o.target, o.cm,
                  opened ? local_address(opened->sock) : opened.error().local_address);
  std::unique_ptr<ClientSession> session;
  if (opened) {
    session = std::make_unique<ClientSession>(std::move(*opened));
    rep.obs.local = local_facts(*session->ep);
    rep.obs.peer = session->welcome.facts;
    rep.warnings = session->ep->warnings;
  } else {
    SessionFailure& f = opened.error();
    observe_failure(rep, f);
    session = std::move(f.session);  // past the welcome: still there for the farewell
    if (!session) return finish();
  }
  rep.obs.cert_expiring = session->cert_expiring;
  Endpoint& ep = *session->ep;
  if (o.forged_qkey) session->welcome.qp.qkey = *o.forged_qkey;
  const proto::Welcome& welcome = session->welcome;
  rep.peer_timeline = welcome.timeline;
  std::vector<proto::Step>& local_timeline = session->local_timeline;

  rep.ack = session->ack;
  probe(o, rep, ep, welcome.qp, welcome.probe,
        std::min(rep.obs.local->active_mtu, welcome.facts.active_mtu), work_end, local_timeline);

  // This host's firewall is read while the server reads its own for the bye:
  // under emulation each read takes a second or two.
  std::future<FirewallReport> local_fw;
  if (rep.obs.failed == Stage::kTraffic || rep.obs.failed == Stage::kCmConnect) {
    // Within what is left of --timeout, less a moment to print.
    const auto within = std::clamp<std::chrono::milliseconds>(
        std::chrono::milliseconds(ms_left(end)) - std::chrono::milliseconds(300),
        std::chrono::seconds(1), kFirewallReadTime);
    local_fw = std::async(std::launch::async, [within] { return read_firewall(within); });
  }
  // Tell the server we are done and collect its side of the story.
  proto::Done done;
  done.timeline = local_timeline;
  done.sent = static_cast<uint64_t>(rep.obs.pings_sent);
  done.received = static_cast<uint64_t>(rep.obs.pings_ok);
  rep.local_timeline = local_timeline;
  const Deadline bye_d = std::max(std::min(end, deadline_in(std::chrono::seconds(5))),
                                  deadline_in(std::chrono::milliseconds(500)));
  if (auto bye = session->farewell(done, bye_d)) {
    rep.peer_timeline.insert(rep.peer_timeline.end(), bye->timeline.begin(), bye->timeline.end());
    rep.obs.peer_firewall = bye->firewall;
    rep.obs.peer_reported = true;
    rep.obs.peer_cm_refusal = bye->cm_refused;
  }
  if (local_fw.valid()) rep.obs.local_firewall = local_fw.get().rules;
  return finish();
}

}  // namespace rdmacheck::conn
