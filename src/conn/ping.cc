#include "conn/ping.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "conn/client_session.h"
#include "conn/endpoint.h"
#include "host/firewall.h"

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

constexpr uint64_t kSendId = 1;
constexpr uint64_t kRecvId = 2;

// One round trip: post a receive, send SIZE bytes, wait for both completions.
struct RoundTrip {
  bool ok = false;
  double rtt_us = 0;
  std::optional<int> wc_status;
  int errnum = 0;
  std::string error;
};

RoundTrip round_trip(Endpoint& ep, const proto::QpInfo& peer, uint32_t size, bool write,
                     std::chrono::milliseconds timeout) {
  RoundTrip r;
  const bool ud = ep.qp->qp_type == IBV_QPT_UD;
  // Pattern so the echo can be checked.
  for (uint32_t i = 0; i < size; ++i) ep.send_buf()[i] = static_cast<char>(i * 7 + size);
  if (auto s = post_recv(ep, kRecvId, size + (ud ? 40 : 0)); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  const auto t0 = Clock::now();
  if (auto s = post_send(ep, kSendId, size, write, peer); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  bool sent = false;
  bool received = false;
  const Deadline d = Clock::now() + timeout;
  while (!(sent && received)) {
    auto wc = next_completion(ep, d);
    if (!wc) {
      r.errnum = wc.error().errnum;
      r.error = wc.error().errnum == ETIMEDOUT
                    ? fmt::format("no completion within {} ms", timeout.count())
                    : wc.error().message();
      return r;
    }
    const ibv_wc& c = **wc;
    if (c.status != IBV_WC_SUCCESS) {
      r.wc_status = c.status;
      r.error = fmt::format("{} on {} ({})", wc_status_text(c.status),
                            c.wr_id == kSendId ? "send" : "receive", ep.context());
      return r;
    }
    if (c.wr_id == kSendId) sent = true;
    if (c.wr_id == kRecvId) {
      received = true;
      r.rtt_us = Micros(Clock::now() - t0).count();
      const uint32_t got = ud ? c.byte_len - 40 : c.byte_len;
      const char* data = ep.recv_buf() + (ud ? 40 : 0);
      if (got != size || std::memcmp(data, ep.send_buf(), size) != 0) {
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
  rep.obs.failed_call = e.call;
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

}  // namespace

RttStats rtt_stats(std::vector<double> rtts, int sent) {
  RttStats s;
  s.sent = sent;
  s.received = static_cast<int>(rtts.size());
  if (rtts.empty()) return s;
  std::sort(rtts.begin(), rtts.end());
  s.min = rtts.front();
  s.max = rtts.back();
  double sum = 0;
  for (double r : rtts) sum += r;
  s.avg = sum / static_cast<double>(rtts.size());
  const size_t n = rtts.size();
  s.median = n % 2 == 1 ? rtts[n / 2] : (rtts[n / 2 - 1] + rtts[n / 2]) / 2;
  // Nearest-rank percentile.
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99 = rtts[std::clamp<size_t>(rank, 1, n) - 1];
  return s;
}

std::vector<uint32_t> ladder_sizes(int mtu, bool ud) {
  if (mtu <= 0) mtu = 1024;
  const auto m = static_cast<uint32_t>(mtu);
  std::vector<uint32_t> sizes = {64, 256, m / 2, m};
  if (!ud) {
    sizes.push_back(2 * m);
    sizes.push_back(8 * m);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

PingReport run_ping(const PingOptions& o) {
  PingReport rep;
  rep.options = o;
  rep.obs.host = o.target.host;
  rep.obs.tcp_port = o.target.tcp_port;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  auto finish = [&]() {
    rep.findings = diagnose(rep.obs);
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
  req.cm = o.cm;
  req.access = proto::info(req.test.op).remote_access;
  req.timing = o.timing;
  // A UD message is one datagram: refuse sizes beyond the path MTU before the hello.
  req.before_hello = [&](Endpoint& ep) -> Status {
    const int mtu = verbs::mtu_bytes(ep.port_attr.active_mtu);
    if (ud && o.size > static_cast<uint32_t>(mtu)) {
      return plain_error("ping",
                         fmt::format("a UD message cannot exceed the path MTU ({} bytes)", mtu));
    }
    return ok_status();
  };
  auto opened = open_client_session(o.target, req, end);
  std::unique_ptr<ClientSession> session;
  if (opened) {
    session = std::make_unique<ClientSession>(std::move(*opened));
    rep.obs.local = local_facts(*session->ep);
    rep.obs.peer = session->welcome.facts;
    rep.warnings = session->ep->warnings;
  } else {
    SessionFailure& f = opened.error();
    fail(rep, f.stage, f.error);
    rep.obs.cm_event = f.cm_event;
    rep.obs.local = f.local;
    rep.obs.peer = f.peer;
    rep.warnings = f.warnings;
    rep.local_timeline = f.local_timeline;
    session = std::move(f.session);  // past the welcome: still there for the farewell
    if (!session) return finish();
  }
  Endpoint& ep = *session->ep;
  const proto::Welcome& welcome = session->welcome;
  rep.peer_timeline = welcome.timeline;
  std::vector<proto::Step>& local_timeline = session->local_timeline;

  std::vector<double> rtts;
  auto note_failure = [&](const RoundTrip& r) {
    rep.obs.failed = Stage::kTraffic;
    rep.obs.wc_status = r.wc_status;
    rep.obs.errnum = r.errnum;
    rep.obs.error = r.error;
    record_qp_state(ep, local_timeline, r.error);
  };
  for (int i = 0; i < o.count && rep.obs.failed == Stage::kDone; ++i) {
    if (Clock::now() >= end) {
      note_failure(RoundTrip{false, 0, std::nullopt, ETIMEDOUT, "the command's --timeout expired"});
      break;
    }
    if (i > 0 && o.interval_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    }
    ++rep.obs.pings_sent;
    const auto left = std::chrono::milliseconds(std::max(ms_left(end), 1));
    RoundTrip r = round_trip(ep, welcome.qp, o.size, o.write, std::min(o.ping_timeout, left));
    if (!r.ok) {
      note_failure(r);
      break;
    }
    ++rep.obs.pings_ok;
    rtts.push_back(r.rtt_us);
    rep.samples.push_back(PingSample{i + 1, o.size, r.rtt_us});
  }
  rep.stats = rtt_stats(rtts, rep.obs.pings_sent);

  if (o.ladder && rep.obs.failed == Stage::kDone) {
    const int mtu = std::min(rep.obs.local->active_mtu, welcome.facts.active_mtu);
    for (uint32_t size : ladder_sizes(mtu, ud)) {
      if (Clock::now() >= end) break;
      const auto left = std::chrono::milliseconds(std::max(ms_left(end), 1));
      RoundTrip r = round_trip(ep, welcome.qp, size, o.write, std::min(o.ping_timeout, left));
      rep.obs.ladder.push_back(LadderResult{size, r.ok, r.rtt_us, r.error});
      if (!r.ok) {
        note_failure(r);
        break;  // the QP is in ERROR now
      }
    }
  }

  if (rep.obs.failed == Stage::kTraffic || rep.obs.failed == Stage::kCmConnect) {
    const auto fw = read_firewall();
    rep.obs.local_firewall = fw.rules;
  }
  // Tell the server we are done and collect its side of the story.
  proto::Done done;
  done.timeline = local_timeline;
  done.sent = static_cast<uint64_t>(rep.obs.pings_sent);
  done.received = static_cast<uint64_t>(rep.obs.pings_ok);
  rep.local_timeline = local_timeline;
  const Deadline bye_d = std::max(std::min(end, deadline_in(std::chrono::seconds(5))),
                                  deadline_in(std::chrono::seconds(2)));
  if (auto bye = session->farewell(done, bye_d)) {
    rep.peer_timeline.insert(rep.peer_timeline.end(), bye->timeline.begin(), bye->timeline.end());
    rep.obs.peer_firewall = bye->firewall;
  }
  return finish();
}

}  // namespace rdmacheck::conn
