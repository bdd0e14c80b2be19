#include "conn/ping.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

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

// A connection-manager failure: which event broke it (or the deadline).
void fail_cm(PingReport& rep, const Error& e) {
  fail(rep, Stage::kCmConnect, e);
  if (e.errnum == ETIMEDOUT) {
    rep.obs.cm_event = "timeout";
  } else {
    rep.obs.cm_event = e.context.substr(0, e.context.find(' '));
  }
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
  rep.obs.host = o.host;
  rep.obs.tcp_port = o.tcp_port;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  auto finish = [&]() {
    rep.findings = diagnose(rep.obs);
    rep.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return rep;
  };

  auto sock = tcp_connect(o.host, o.tcp_port, std::min(end, deadline_in(std::chrono::seconds(5))));
  if (!sock) {
    fail(rep, sock.error().call == "getaddrinfo" ? Stage::kResolve : Stage::kTcpConnect,
         sock.error());
    return finish();
  }
  const bool ud = o.transport == "ud";
  const auto ladder = ladder_sizes(4096, ud);  // upper bound for the buffer; trimmed below
  EndpointOptions eo;
  eo.device = o.device;
  eo.port = o.ib_port;
  eo.gid_index = o.gid_index;
  eo.local_address = local_address(*sock);
  eo.transport = o.transport;
  eo.buffer_size = std::max<size_t>(o.size, o.ladder ? ladder.back() : 0);
  eo.access = o.write ? IBV_ACCESS_REMOTE_WRITE : 0;
  eo.src = o.src;
  const Deadline setup_d = std::min(end, deadline_in(std::chrono::seconds(10)));
  auto ep = o.cm
                ? open_cm_endpoint(eo, peer_address(*sock), o.tcp_port, setup_d, rep.local_timeline)
                : open_endpoint(eo, rep.local_timeline);
  if (!ep) {
    if (o.cm && ep.error().call == "rdma_cm") {
      fail_cm(rep, ep.error());
      return finish();
    }
    fail(rep, Stage::kLocalSetup, ep.error());
    (void)send_frame(*sock, proto::error_message("client setup failed: " + ep.error().message()),
                     deadline_in(std::chrono::seconds(1)));
    return finish();
  }
  rep.warnings = ep->warnings;
  rep.obs.local = local_facts(*ep);
  if (ud && o.size > static_cast<uint32_t>(rep.obs.local->active_mtu)) {
    fail(rep, Stage::kLocalSetup,
         plain_error("ping", fmt::format("a UD message cannot exceed the path MTU ({} bytes)",
                                         rep.obs.local->active_mtu)));
    return finish();
  }

  proto::Hello hello;
  hello.test.transport = o.transport;
  hello.test.op = o.write ? "write" : "send";
  hello.test.max_size = static_cast<uint32_t>(eo.buffer_size);
  hello.test.depth = 1;
  hello.test.cm = o.cm;
  hello.facts = *rep.obs.local;
  hello.qp = local_qp_info(*ep);
  const Deadline hs = std::min(end, deadline_in(std::chrono::seconds(10)));
  if (auto s = send_frame(*sock, proto::to_json(hello), hs); !s) {
    fail(rep, Stage::kHandshake, s.error());
    return finish();
  }
  auto reply = recv_frame(*sock, hs);
  if (!reply) {
    fail(rep, Stage::kHandshake, reply.error());
    return finish();
  }
  auto welcome = proto::parse_welcome(*reply);
  if (!welcome) {
    fail(rep, Stage::kHandshake, welcome.error());
    return finish();
  }
  rep.obs.peer = welcome->facts;
  rep.peer_timeline = welcome->timeline;
  if (o.cm) {
    if (welcome->cm_token == 0) {
      fail(rep, Stage::kHandshake, plain_error("handshake", "the server sent no rdma_cm token"));
    } else {
      const std::string token(reinterpret_cast<const char*>(&welcome->cm_token),
                              sizeof welcome->cm_token);
      if (auto s =
              cm_connect(*ep, token, o.timing, std::min(end, deadline_in(std::chrono::seconds(8))),
                         rep.local_timeline);
          !s) {
        fail_cm(rep, s.error());
      }
    }
  } else if (auto s = connect_qp(*ep, welcome->qp, welcome->facts.active_mtu, o.timing,
                                 rep.local_timeline);
             !s) {
    fail(rep, Stage::kQpSetup, s.error());
  }

  std::vector<double> rtts;
  auto note_failure = [&](const RoundTrip& r) {
    rep.obs.failed = Stage::kTraffic;
    rep.obs.wc_status = r.wc_status;
    rep.obs.errnum = r.errnum;
    rep.obs.error = r.error;
    record_qp_state(*ep, rep.local_timeline, r.error);
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
    RoundTrip r = round_trip(*ep, welcome->qp, o.size, o.write, std::min(o.ping_timeout, left));
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
    const int mtu = std::min(rep.obs.local->active_mtu, welcome->facts.active_mtu);
    for (uint32_t size : ladder_sizes(mtu, ud)) {
      if (Clock::now() >= end) break;
      const auto left = std::chrono::milliseconds(std::max(ms_left(end), 1));
      RoundTrip r = round_trip(*ep, welcome->qp, size, o.write, std::min(o.ping_timeout, left));
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
  done.timeline = rep.local_timeline;
  done.sent = static_cast<uint64_t>(rep.obs.pings_sent);
  done.received = static_cast<uint64_t>(rep.obs.pings_ok);
  const Deadline bye_d = std::max(std::min(end, deadline_in(std::chrono::seconds(5))),
                                  deadline_in(std::chrono::seconds(2)));
  if (send_frame(*sock, proto::to_json(done), bye_d)) {
    if (auto b = recv_frame(*sock, bye_d)) {
      if (auto bye = proto::parse_bye(*b)) {
        rep.peer_timeline.insert(rep.peer_timeline.end(), bye->timeline.begin(),
                                 bye->timeline.end());
        rep.obs.peer_firewall = bye->firewall;
      }
    }
  }
  return finish();
}

}  // namespace rdmacheck::conn
