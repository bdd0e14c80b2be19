#include "perf/engine.h"

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "perf/work_request.h"

namespace rdmacheck::perf {
namespace {

using Seconds = std::chrono::duration<double>;
using Micros = std::chrono::duration<double, std::micro>;

constexpr int kPollBatch = 64;
constexpr uint64_t kRecvId = 0;  // receives; sends count from 1
constexpr auto kStall = std::chrono::seconds(10);
constexpr auto kEventWake = std::chrono::milliseconds(100);

struct LaneState {
  std::vector<WorkRequest> wrs;  // the post list, rebuilt per size
  uint64_t posted = 0;
  uint64_t completed = 0;  // every work request up to the last signalled completion
};

Error wc_error(const ibv_wc& wc, const conn::Endpoint& ep) {
  return code_error("completion", 0,
                    fmt::format("{} on {} after {} messages", conn::wc_status_text(wc.status),
                                ep.context(), wc.wr_id));
}

Error timed_out(const conn::Endpoint& ep, const char* what) {
  return code_error(what, ETIMEDOUT, ep.context());
}

// Posts up to N work requests of the lane's list, signalling every cq_mod-th
// one and the last of a counted run.
Status post_batch(Lane& lane, LaneState& st, const Spec& s, uint64_t n, uint64_t last) {
  for (uint64_t k = 0; k < n; ++k) {
    ibv_send_wr& wr = st.wrs[k].wr;
    const uint64_t id = st.posted + k + 1;
    wr.wr_id = id;
    sequence_atomic(st.wrs[k], id - 1);
    wr.send_flags &= ~static_cast<unsigned>(IBV_SEND_SIGNALED);
    if (id % s.cq_mod == 0 || id == last) wr.send_flags |= IBV_SEND_SIGNALED;
    wr.next = k + 1 < n ? &st.wrs[k + 1].wr : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(lane.ep->qp.get(), &st.wrs[0].wr, &bad); rc != 0) {
    return code_error("ibv_post_send", rc, lane.ep->context());
  }
  st.posted += n;
  return ok_status();
}

// A completed receive is posted again at once: the peer of a bidirectional
// two-sided test keeps sending while we do.
Status repost(conn::Endpoint& ep) {
  return conn::post_recv(ep, kRecvId, static_cast<uint32_t>(ep.half));
}

// Reaps completions; a signalled one covers every request up to its id (RC
// order). Returns how many it reaped.
Result<int> reap(Lane& lane, LaneState& st) {
  std::array<ibv_wc, kPollBatch> wc;
  const int n = ibv_poll_cq(lane.ep->cq.get(), kPollBatch, wc.data());
  if (n < 0) return code_error("ibv_poll_cq", n, lane.ep->context());
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return wc_error(wc[i], *lane.ep);
    if ((wc[i].opcode & IBV_WC_RECV) != 0) {
      if (auto r = repost(*lane.ep); !r) return r.error();
      continue;
    }
    st.completed = std::max(st.completed, wc[i].wr_id);
  }
  return n;
}

// -e: sleeps until a lane's CQ has a completion, or WAKE. Every CQ is armed,
// then polled once more (a completion that came before the arming raises no
// event); only an empty pass sleeps, on all the lanes' completion channels.
Status sleep_on_cqs(std::span<Lane> lanes, std::span<LaneState> st, Clock::time_point wake) {
  for (auto& lane : lanes) {
    if (int rc = ibv_req_notify_cq(lane.ep->cq.get(), 0); rc != 0) {
      return code_error("ibv_req_notify_cq", rc, lane.ep->context());
    }
  }
  int reaped = 0;
  for (size_t l = 0; l < lanes.size(); ++l) {
    auto n = reap(lanes[l], st[l]);
    if (!n) return n.error();
    reaped += *n;
  }
  if (reaped > 0) return ok_status();
  std::vector<pollfd> fds;
  fds.reserve(lanes.size());
  for (auto& lane : lanes) fds.push_back({lane.ep->channel->fd, POLLIN, 0});
  const int r = ::poll(fds.data(), fds.size(), ms_left(wake));
  if (r < 0 && errno != EINTR) return errno_error("poll");
  for (size_t l = 0; l < lanes.size(); ++l) {
    if ((fds[l].revents & POLLIN) != 0) conn::take_cq_event(*lanes[l].ep);
  }
  return ok_status();
}

// The lanes' post lists for SIZE, built once per size.
std::vector<LaneState> lane_states(std::span<Lane> lanes, const Spec& s, uint32_t size) {
  std::vector<LaneState> st(lanes.size());
  for (size_t l = 0; l < lanes.size(); ++l) {
    st[l].wrs.resize(s.post_list);
    for (auto& w : st[l].wrs) build_wr(s.op, *lanes[l].ep, lanes[l].peer, size, s.inline_size, w);
  }
  return st;
}

// The counted window of a bandwidth run: after the warm-up, up to -D's end
// (or the last completion of -n), and the messages completed at each end.
struct Counted {
  Clock::time_point from, to;
  uint64_t from_msgs = 0, to_msgs = 0;
};

// The sample of a run that began at T0, measured over C, from its progress
// marks: average, peak (over a tenth of the run), per-interval rates, the
// longest stall.
BwSample sample_of(uint32_t size, const Counted& c, Clock::time_point t0,
                   const std::vector<Progress>& progress, const std::vector<LaneState>& st) {
  BwSample b;
  b.size = size;
  b.msgs = c.to_msgs - c.from_msgs;
  b.seconds = Seconds(c.to - c.from).count();
  const uint64_t bytes = b.msgs * size;
  b.avg_gbps = gbps(bytes, b.seconds);
  b.mib_s = mib_per_s(bytes, b.seconds);
  b.mpps = mpps(b.msgs, b.seconds);
  const double peak_msgs = peak_rate(progress, Seconds(c.to - t0).count() / 10);
  b.peak_gbps = std::max(b.avg_gbps, peak_msgs * size * 8 / 1e9);
  for (const auto& x : st) b.lane_ops.push_back(x.completed);
  b.out_gbps = b.avg_gbps;
  const double from_t = Seconds(c.from - t0).count();
  const double to_t = Seconds(c.to - t0).count();
  std::vector<Progress> counted{{from_t, c.from_msgs}};
  for (const auto& x : progress) {
    if (x.t > from_t && x.t < to_t) counted.push_back(x);
  }
  counted.push_back({to_t, c.to_msgs});
  for (double rate : interval_rates(counted, kIntervals)) {
    b.interval_gbps.push_back(rate * size * 8 / 1e9);
  }
  b.interval_s =
      b.interval_gbps.empty() ? 0 : (to_t - from_t) / static_cast<double>(b.interval_gbps.size());
  b.stall = longest_stall(progress);
  return b;
}
}  // namespace

Status service_receives(conn::Endpoint& ep) {
  std::array<ibv_wc, kPollBatch> wc;
  const int n = ibv_poll_cq(ep.cq.get(), kPollBatch, wc.data());
  if (n < 0) return code_error("ibv_poll_cq", n, ep.context());
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return wc_error(wc[i], ep);
    if ((wc[i].opcode & IBV_WC_RECV) != 0) {
      if (auto r = repost(ep); !r) return r;
    }
  }
  return ok_status();
}

Result<BwSample> run_bw(std::span<Lane> lanes, const Spec& s, uint32_t size, Deadline hard,
                        const std::atomic<bool>& stop, const Tick& tick) {
  const bool timed = s.duration_s > 0;
  // --run_infinitely: a stop ends the run as the end of -D would, and is counted.
  const bool forever = s.run_infinitely;
  std::vector<LaneState> st = lane_states(lanes, s, size);
  auto total = [&] {
    uint64_t t = 0;
    for (const auto& x : st) t += x.completed;
    return t;
  };
  const uint64_t last = timed ? 0 : s.iterations;
  const auto t0 = Clock::now();
  const auto warm_at = t0 + std::chrono::duration_cast<Clock::duration>(Seconds(s.warmup_s));
  const auto end_at = t0 + std::chrono::duration_cast<Clock::duration>(Seconds(s.duration_s));
  Counted c{t0, t0};
  bool warm = !timed || s.warmup_s <= 0, ended = false;
  std::vector<Progress> progress{{0, 0}};
  auto last_mark = t0;
  for (;;) {
    const auto now = Clock::now();
    const bool stopping = stop.load(std::memory_order_relaxed);
    if (now >= hard || (stopping && !forever)) {
      return timed_out(*lanes[0].ep, stopping ? "interrupted" : "bandwidth run");
    }
    if (!warm && now >= warm_at) {
      warm = true;
      c.from = now;
      c.from_msgs = total();
    }
    if (timed && !ended && (forever ? stopping : now >= end_at)) {
      ended = true;
      c.to = now;
      c.to_msgs = total();
    }
    bool busy = false;
    for (size_t l = 0; l < lanes.size(); ++l) {
      LaneState& x = st[l];
      // After the end, only top up to a signalled request so the queue drains.
      uint64_t want =
          ended ? (s.cq_mod - x.posted % s.cq_mod) % s.cq_mod
                : (timed ? s.post_list : std::min<uint64_t>(s.post_list, last - x.posted));
      want = std::min<uint64_t>(want, s.post_list);
      if (want > 0 && x.posted - x.completed + want <= s.tx_depth) {
        if (auto r = post_batch(lanes[l], x, s, want, last); !r) return r.error();
        busy = true;
      }
      auto n = reap(lanes[l], x);
      if (!n) return n.error();
      busy = busy || *n > 0;
    }
    // -e: a pass that could neither post nor reap sleeps until a completion,
    // waking for the next mark of the clock (warm-up's end, -D's end, the
    // hard deadline) and at least every kEventWake to look at STOP.
    if (s.events && !busy) {
      auto wake = std::min(hard, now + kEventWake);
      if (!warm) wake = std::min(wake, warm_at);
      if (timed && !ended && !forever) wake = std::min(wake, end_at);
      if (auto r = sleep_on_cqs(lanes, st, wake); !r) return r.error();
    }
    const uint64_t done = total();
    if (now - last_mark >= std::chrono::milliseconds(1)) {
      progress.push_back({Seconds(now - t0).count(), done});
      last_mark = now;
      if (tick) tick(done);
    }
    bool drained = true;
    for (const auto& x : st) drained = drained && x.completed == x.posted;
    if (!timed && drained && done == last * lanes.size()) {
      c.to = Clock::now();
      c.to_msgs = done;
      progress.push_back({Seconds(c.to - t0).count(), done});
      break;
    }
    if (ended && drained) break;
  }
  return sample_of(size, c, t0, progress, st);
}

namespace {

// Busy-polls LANE's CQ until the round trip's completions are in: the
// receive (send ping-pong) and our own request; returns when the receive (or,
// without one, our request) completed.
Result<Clock::time_point> await_round_trip(Lane& lane, bool need_recv, Deadline hard,
                                           const std::atomic<bool>& stop) {
  bool got_recv = !need_recv, got_send = false;
  Clock::time_point at{};
  for (uint64_t spins = 0; !(got_recv && got_send); ++spins) {
    ibv_wc wc{};
    const int n = ibv_poll_cq(lane.ep->cq.get(), 1, &wc);
    if (n < 0) return code_error("ibv_poll_cq", n, lane.ep->context());
    if (n == 1) {
      if (wc.status != IBV_WC_SUCCESS) return wc_error(wc, *lane.ep);
      if ((wc.opcode & IBV_WC_RECV) != 0) {
        got_recv = true;
        at = Clock::now();
      } else {
        got_send = true;
        if (!need_recv) at = Clock::now();
      }
      continue;
    }
    if (spins % 1024 == 0 && (Clock::now() >= hard || stop.load(std::memory_order_relaxed))) {
      return timed_out(*lane.ep, "latency round trip");
    }
  }
  return at;
}

// Write ping-pong: wait for the peer's write to stamp our buffer's last byte,
// reaping our own write completions meanwhile.
Status wait_stamp(Lane& lane, uint32_t size, uint8_t stamp, Deadline hard,
                  const std::atomic<bool>& stop) {
  volatile const char* last = lane.ep->recv_buf() + size - 1;
  for (uint64_t spins = 0; static_cast<uint8_t>(*last) != stamp; ++spins) {
    ibv_wc wc{};
    const int n = ibv_poll_cq(lane.ep->cq.get(), 1, &wc);
    if (n < 0) return code_error("ibv_poll_cq", n, lane.ep->context());
    if (n == 1 && wc.status != IBV_WC_SUCCESS) return wc_error(wc, *lane.ep);
    if (spins % 1024 == 0 && (Clock::now() >= hard || stop.load(std::memory_order_relaxed))) {
      return timed_out(*lane.ep, "write ping-pong");
    }
  }
  return ok_status();
}

}  // namespace

Result<LatSample> run_lat(Lane& lane, const Spec& s, uint32_t size, uint64_t& stamp, Deadline hard,
                          const std::atomic<bool>& stop, const Tick& tick) {
  WorkRequest w;
  build_wr(s.op, *lane.ep, lane.peer, size, s.inline_size, w);
  w.wr.send_flags |= IBV_SEND_SIGNALED;
  std::vector<double> us;
  const bool timed = s.duration_s > 0;  // -D: round trips until then, warm-up not counted
  const auto start = Clock::now();
  const auto warm_at = start + std::chrono::duration_cast<Clock::duration>(Seconds(s.warmup_s));
  const auto end_at = start + std::chrono::duration_cast<Clock::duration>(Seconds(s.duration_s));
  if (!timed) us.reserve(s.iterations);
  const bool pingpong = s.op == Op::kWrite || s.op == Op::kSend;
  for (uint64_t i = 0; timed || i < s.iterations; ++i) {
    if (timed && (Clock::now() >= end_at || us.size() >= kMaxLatSamples)) break;
    const uint8_t mark = stamp_byte(stamp++);
    if (s.op == Op::kWrite) lane.ep->send_buf()[size - 1] = static_cast<char>(mark);
    if (s.op == Op::kSend) {
      if (auto r = post_receive(*lane.ep, size); !r) return r.error();
    }
    w.wr.wr_id = i + 1;
    sequence_atomic(w, i);
    ibv_send_wr* bad = nullptr;
    const auto t0 = Clock::now();
    if (int rc = ibv_post_send(lane.ep->qp.get(), &w.wr, &bad); rc != 0) {
      return code_error("ibv_post_send", rc, lane.ep->context());
    }
    Clock::time_point t1;
    // A round trip takes microseconds (milliseconds emulated): one that has
    // not come back in kStall is a peer that stopped answering.
    const Deadline stall = std::min(hard, t0 + kStall);
    if (s.op == Op::kWrite) {
      if (auto r = wait_stamp(lane, size, mark, stall, stop); !r) return r.error();
      t1 = Clock::now();
    } else {
      auto r = await_round_trip(lane, s.op == Op::kSend, stall, stop);
      if (!r) return r.error();
      t1 = *r;
    }
    const double rtt = Micros(t1 - t0).count();
    if (!timed || t0 >= warm_at) us.push_back(pingpong ? rtt / 2 : rtt);
    if (tick) tick(i + 1);
  }
  // Write: drain our last write's completion.
  if (s.op == Op::kWrite) {
    ibv_wc wc{};
    const Deadline d = std::min(hard, deadline_in(std::chrono::seconds(2)));
    while (ibv_poll_cq(lane.ep->cq.get(), 1, &wc) == 0 && Clock::now() < d) {
    }
  }
  LatSample out;
  out.size = size;
  out.half_round_trip = pingpong;
  if (s.histogram) out.histogram = histogram(us);
  out.stats = lat_stats(std::move(us));
  return out;
}

}  // namespace rdmacheck::perf
