#include "conn/ping.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include "conn/client_session.h"
#include "conn/endpoint.h"
#include "conn/user_selection.h"
#include "doctor/check.h"
#include "host/firewall.h"
#include "net/tcp.h"
#include "sysfs/port_counters.h"

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

constexpr uint64_t kSendId = 1;

// One round trip: send SIZE bytes, wait for the echo and the send's completion.
struct RoundTrip {
  bool ok = false;
  bool lost = false;   // UD: no echo in time, the QP still usable (a datagram may be lost)
  bool acked = false;  // RC: the send completed (the peer acknowledged it), the answer did not come
  double rtt_us = 0;
  std::optional<int> wc_status;
  int errnum = 0;
  std::string error;
};

// Round trips on one endpoint. Each probe carries its sequence number, so a
// UD echo that comes back after its probe was given up is recognised and
// skipped instead of being taken for the next probe's answer.
class Prober {
 public:
  Prober(Endpoint& ep, const proto::QpInfo& peer, bool write)
      : ep_(ep),
        peer_(peer),
        write_(write),
        ud_(ep.qp->qp_type == IBV_QPT_UD),
        posted_(ep.recv_slots, false) {}
  RoundTrip run(uint32_t size, std::chrono::milliseconds timeout);

 private:
  void fill(uint32_t size) const;
  [[nodiscard]] uint32_t tag_of(const char* data, uint32_t len) const;
  Status ensure_recv();

  Endpoint& ep_;
  const proto::QpInfo& peer_;
  bool write_;
  bool ud_;
  uint32_t seq_ = 0;
  std::vector<bool> posted_;  // per receive slot
};

void Prober::fill(uint32_t size) const {
  char* b = ep_.send_buf();
  for (uint32_t i = 0; i < size; ++i) b[i] = static_cast<char>(i * 7 + size + seq_ * 13);
  if (size >= sizeof seq_) std::memcpy(b, &seq_, sizeof seq_);
}

uint32_t Prober::tag_of(const char* data, uint32_t len) const {
  uint32_t tag = 0;
  if (len >= sizeof tag) std::memcpy(&tag, data, sizeof tag);
  return tag;
}

// Every receive slot stays posted across probes: after a lost UD probe its
// receive is still there for the next echo, and a stale echo that takes one
// leaves the others for the real one. Each takes the largest message.
Status Prober::ensure_recv() {
  for (uint32_t i = 0; i < posted_.size(); ++i) {
    if (posted_[i]) continue;
    if (auto s = post_recv(ep_, kRecvWrId + i, static_cast<uint32_t>(ep_.half), i); !s) return s;
    posted_[i] = true;
  }
  return ok_status();
}

RoundTrip Prober::run(uint32_t size, std::chrono::milliseconds timeout) {
  RoundTrip r;
  ++seq_;
  fill(size);
  if (auto s = ensure_recv(); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  const auto t0 = Clock::now();
  if (auto s = post_send(ep_, kSendId, size, write_, peer_); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  bool sent = false;
  bool received = false;
  const Deadline d = Clock::now() + timeout;
  while (!(sent && received)) {
    auto wc = next_completion(ep_, d);
    if (!wc) {
      r.errnum = wc.error().errnum;
      r.error = wc.error().errnum == ETIMEDOUT
                    ? fmt::format("no completion within {} ms", timeout.count())
                    : wc.error().message();
      // A UD send completes locally; only the echo is missing: a lost datagram.
      r.lost = ud_ && sent && wc.error().errnum == ETIMEDOUT;
      r.acked = !ud_ && sent && wc.error().errnum == ETIMEDOUT;
      return r;
    }
    const ibv_wc& c = **wc;
    const std::optional<uint32_t> slot = recv_slot_of(ep_, c.wr_id);
    if (slot) posted_[*slot] = false;
    if (c.status != IBV_WC_SUCCESS) {
      r.wc_status = c.status;
      r.error = fmt::format("{} on {} ({})", wc_status_text(c.status),
                            c.wr_id == kSendId ? "send" : "receive", ep_.context());
      return r;
    }
    if (c.wr_id == kSendId) sent = true;
    if (slot) {
      const uint32_t got = ud_ ? c.byte_len - 40 : c.byte_len;
      const char* data = ep_.recv_buf(*slot) + (ud_ ? 40 : 0);
      if (ud_ && size >= sizeof seq_ && tag_of(data, got) != seq_) {
        // The late echo of an earlier probe: wait on for this one's.
        if (auto s = ensure_recv(); !s) {
          r.errnum = s.error().errnum;
          r.error = s.error().message();
          return r;
        }
        continue;
      }
      received = true;
      r.rtt_us = Micros(Clock::now() - t0).count();
      if (got != size || std::memcmp(data, ep_.send_buf(), size) != 0) {
        r.error =
            fmt::format("echo of {} bytes came back as {} bytes or with other content", size, got);
        return r;
      }
    }
  }
  r.ok = true;
  return r;
}

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

// How long one probe may wait. RC retransmits on its own: wait for every try
// to time out before calling it failed. UD has no retransmission: a datagram
// not echoed within answer_wait counts as lost, and probing goes on.
std::chrono::milliseconds probe_wait(const PingOptions& o, const AckTimeout& ack, bool ud,
                                     Deadline end) {
  using std::chrono::milliseconds;
  const auto left = milliseconds(std::max(ms_left(end), 1));
  if (ud) return std::min(answer_wait(o, ack), left);
  const auto per_try = milliseconds(static_cast<int64_t>(ack.timeout_ms()) + 1);
  return std::min(std::max(o.ping_timeout, (o.timing.retry_cnt + 1) * per_try + milliseconds(1000)),
                  left);
}

// The probes: COUNT at --size, then the size ladder. Only a failed RC work
// request (its QP is in ERROR then), or a UD size class with no answer at all,
// fails the ping; a lost datagram is counted as loss.
void probe(const PingOptions& o, PingReport& rep, Endpoint& ep, const proto::QpInfo& peer,
           int path_mtu, Deadline end, std::vector<proto::Step>& local_timeline) {
  if (rep.obs.failed != Stage::kDone) return;
  const bool ud = o.transport == proto::Transport::kUd;
  const std::string transport(name_of(o.transport));
  Prober prober(ep, peer, o.write);
  std::vector<double> rtts;
  // A failed RC message with sequence gaps behind it was not stopped by its
  // size: the packets after a gap arrived (reordering, or loss of some).
  const Counters counters_before = ud ? Counters{} : read_counters(ep.fs, ep.device, ep.port);
  auto note_failure = [&](const RoundTrip& r) {
    rep.obs.failed = Stage::kTraffic;
    rep.obs.wc_status = r.wc_status;
    rep.obs.errnum = r.errnum;
    rep.obs.error = r.error;
    record_qp_state(ep, local_timeline, r.error);
    if (!ud) {
      const Counters d = delta(counters_before, read_counters(ep.fs, ep.device, ep.port));
      rep.obs.seq_gaps = sequence_gaps(d);
      rep.obs.seq_gap_counters = describe_sequence_gaps(d);
    }
  };
  auto slow = [&](const RoundTrip& r) { return !ud && r.rtt_us > 1000 * rep.ack.timeout_ms(); };
  // A probe sent without the time for its answer would be counted lost by
  // the deadline, not by the path: on a long path (200 ms) the count may not
  // fit the command's time. What fitted is the measurement.
  const auto out_of_time = [&] { return Clock::now() + answer_wait(o, rep.ack) > end; };
  RoundTrip last;
  for (int i = 0; i < o.count; ++i) {
    if (out_of_time()) {
      if (i == 0) {
        note_failure(RoundTrip{.errnum = ETIMEDOUT, .error = "the command's --timeout expired"});
      } else {
        rep.warnings.push_back(fmt::format(
            "--timeout: {} of the {} pings fitted in the command's time; the rest were not sent", i,
            o.count));
      }
      break;
    }
    if (i > 0 && o.interval_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    }
    ++rep.obs.pings_sent;
    last = prober.run(o.size, probe_wait(o, rep.ack, ud, end));
    count_probe(rep.probes, transport, o.size, last.ok, slow(last));
    // Ten datagrams and not one back (loss above 72 % at 95 %): dead, stop waiting.
    if (last.lost && rep.obs.pings_ok == 0 && rep.obs.pings_sent >= 10) break;
    if (last.lost) continue;
    if (!last.ok) {
      if (last.acked) ++rep.obs.pings_unanswered;
      note_failure(last);
      break;
    }
    ++rep.obs.pings_ok;
    rtts.push_back(last.rtt_us);
    rep.samples.push_back(PingSample{i + 1, o.size, last.rtt_us});
  }
  rep.stats = rtt_stats(rtts, rep.obs.pings_sent);
  if (rep.obs.failed == Stage::kDone && rep.obs.pings_sent > 0 && rep.obs.pings_ok == 0) {
    note_failure(last);  // not one datagram came back: that is a dead path
  }
  if (!o.ladder || rep.obs.failed != Stage::kDone) return;
  for (uint32_t size : ladder_sizes(path_mtu, ud)) {
    if (out_of_time()) {
      rep.warnings.push_back(
          fmt::format("--timeout: the size ladder stopped before {} B for want of time", size));
      break;
    }
    RoundTrip r;
    for (int t = 0; t < (ud ? std::max(o.ladder_tries, 1) : 1); ++t) {
      r = prober.run(size, probe_wait(o, rep.ack, ud, end));
      count_probe(rep.probes, transport, size, r.ok, slow(r));
      if (!r.lost || out_of_time()) break;
    }
    if (r.lost && out_of_time()) {
      // Its tries were cut by the deadline: no verdict on this size.
      rep.warnings.push_back(
          fmt::format("--timeout: the size ladder stopped at {} B for want of time", size));
      break;
    }
    rep.obs.ladder.push_back(LadderResult{size, r.ok, r.rtt_us, r.error});
    if (!r.ok) {
      note_failure(r);
      break;  // an RC QP is in ERROR now; a UD size class got no answer at all
    }
  }
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

  const bool ud = o.transport == proto::Transport::kUd;
  const auto ladder = ladder_sizes(4096, ud);  // upper bound for the buffer; trimmed below
  SessionRequest req;
  req.test.kind = proto::TestKind::kPing;
  req.test.transport = o.transport;
  req.test.op = o.write ? proto::Op::kWrite : proto::Op::kSend;
  req.test.max_size = std::max<uint32_t>(o.size, o.ladder ? ladder.back() : 0);
  req.test.depth = 1;
  req.recv_slots = ud ? kUdPingRecvSlots : 1;
  req.cm = o.cm;
  req.access = proto::info(req.test.op).remote_access;
  req.timing = o.timing;
  req.ack_timeout = o.ack_timeout;
  // A UD message is one datagram: refuse sizes beyond the path MTU before the hello.
  req.before_hello = [&](Endpoint& ep) -> Status {
    const int mtu = verbs::mtu_bytes(ep.port_attr.active_mtu);
    if (ud && o.size > static_cast<uint32_t>(mtu)) {
      return plain_error("ping",
                         fmt::format("a UD message cannot exceed the path MTU ({} bytes)", mtu));
    }
    return ok_status();
  };
  req.forged_gid = o.forged_gid;
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
    fail(rep, f.stage, f.error);
    rep.obs.cm_break = f.cm_break;
    rep.obs.server_refused = f.server_refused;
    rep.obs.refusal_code = f.refusal_code;
    rep.obs.auth = f.auth;
    if (f.stage == Stage::kLocalSetup) rep.obs.no_rdma = doctor::no_rdma_device(o.target.fs);
    rep.obs.local = f.local;
    rep.obs.peer = f.peer;
    rep.warnings = f.warnings;
    rep.local_timeline = f.local_timeline;
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
  probe(o, rep, ep, welcome.qp, std::min(rep.obs.local->active_mtu, welcome.facts.active_mtu),
        work_end, local_timeline);

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
