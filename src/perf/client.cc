#include "perf/client.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "conn/client_session.h"
#include "conn/diagnose.h"
#include "conn/endpoint.h"
#include "conn/user_selection.h"
#include "doctor/check.h"
#include "net/tcp.h"
#include "perf/client_setup.h"
#include "perf/cpu_time.h"
#include "perf/report.h"
#include "perf/sync.h"
#include "perf/validate.h"
#include "sysfs/port_counters.h"
#include "sysfs/rdma_sysfs.h"
#include "verbs/port_rate.h"

namespace rdmacheck::perf {
namespace {

using conn::ClientSession;
using conn::Stage;

// --validate and -b: what each lane's server and we ourselves check, and the
// barriers that keep both sides on the same size.
struct Barriers {
  std::vector<const Channel*> socks;
  std::vector<conn::Endpoint*> eps;
  DataPlan plan;
  uint32_t seed = 0;
  std::vector<uint64_t> counted;  // atomics, -b: the server's operations so far, per lane
};

// Our sources for STEP on every lane (what we send, or what the server reads).
void prepare(const Barriers& b, const Spec& s, uint32_t step) {
  if (!s.validate) return;
  const uint32_t size = s.sizes[step];
  for (conn::Endpoint* ep : b.eps) {
    if (b.plan.fills_send) fill_pattern(ep->send_buf(), size, b.seed, Side::kClient, step);
    if (b.plan.fills_recv) fill_pattern(ep->recv_buf(), size, b.seed, Side::kClient, step);
  }
}

// After STEP ran: the server checks its side, we check ours, per lane.
Status check_step(PerfReport& r, Barriers& b, const Spec& s, uint32_t step,
                  const std::vector<uint64_t>& ops, Deadline end) {
  std::vector<proto::Sync> msgs(b.socks.size());
  for (size_t l = 0; l < msgs.size(); ++l) {
    msgs[l].step = step;
    msgs[l].phase = proto::SyncPhase::kCheck;
    msgs[l].ops = l < ops.size() ? ops[l] : 0;
  }
  auto replies = exchange_sync(b.socks, b.eps, msgs, end);
  if (!replies) return replies.error();
  if (!s.validate) return ok_status();
  const uint32_t size = s.sizes[step];
  for (size_t l = 0; l < replies->size(); ++l) {
    const std::string lane = b.socks.size() > 1 ? fmt::format("QP {}: ", l + 1) : "";
    for (const auto& e : (*replies)[l].errors) r.validation_errors.push_back(lane + "server: " + e);
    const conn::Endpoint& ep = *b.eps[l];
    auto note = [&](const char* what, const std::optional<std::string>& why) {
      ++r.validation_checks;
      if (why)
        r.validation_errors.push_back(fmt::format("{}{} ({} B): {}", lane, what, size, *why));
    };
    // The server's own checks count too (one per check it makes).
    const DataPlan server = data_plan(s.op, s.kind, s.transport, s.bidir, true);
    r.validation_checks += (server.checks_recv ? 1 : 0) + (server.checks_fetch ? 1 : 0) +
                           (server.checks_counter ? 1 : 0);
    if (b.plan.checks_recv) {
      const uint64_t n = b.plan.last_byte_stamped ? size - 1 : size;
      note("data the server sent",
           check_pattern(ep.recv_buf() + b.plan.recv_offset, n, b.seed, Side::kServer, step));
    }
    if (b.plan.checks_fetch) {
      note("data read from the server",
           check_pattern(ep.send_buf(), size, b.seed, Side::kServer, step));
    }
    if (b.plan.checks_counter) {
      b.counted[l] += (*replies)[l].ops;
      note("the server's atomics", check_counter(ep.recv_buf(), b.counted[l]));
    }
  }
  return ok_status();
}

// -b: both sides start STEP together.
Status go(Barriers& b, uint32_t step, Deadline end) {
  std::vector<proto::Sync> msgs(b.socks.size());
  for (auto& m : msgs) m.step = step;
  auto replies = exchange_sync(b.socks, b.eps, msgs, end);
  return replies ? ok_status() : Status(replies.error());
}

// The progress line: which size of how many, and how far into it.
Tick ticker(const PerfOptions& o, Clock::time_point start, uint32_t step, uint64_t target) {
  if (!o.progress) return {};
  auto last = std::make_shared<Clock::time_point>();
  return [&o, start, step, target, last](uint64_t done) {
    const auto now = Clock::now();
    if (now - start < std::chrono::seconds(1) || now - *last < std::chrono::milliseconds(200)) {
      return;
    }
    *last = now;
    const Spec& s = o.spec;
    const char* unit = s.kind == Kind::kBw ? "messages" : "round trips";
    const std::string how = target > 0
                                ? fmt::format("{} of {} {}", done, target, unit)
                                : fmt::format("{:.1f} of {} s, {} {}",
                                              std::chrono::duration<double>(now - start).count(),
                                              s.duration_s, done, unit);
    o.progress(fmt::format("{} {} B (size {} of {}): {}", name_of(s.kind), s.sizes[step], step + 1,
                           s.sizes.size(), how));
  };
}

// --run_infinitely: every -D seconds, that interval's rate as one line.
Tick interval_ticker(const PerfOptions& o, uint32_t size) {
  if (!o.interval) return {};
  struct Mark {
    Clock::time_point at = Clock::now();
    uint64_t done = 0;
  };
  auto last = std::make_shared<Mark>();
  const auto every = std::chrono::duration<double>(o.spec.duration_s);
  return [&o, size, last, every](uint64_t done) {
    const auto now = Clock::now();
    const std::chrono::duration<double> dt = now - last->at;
    if (dt < every) return;
    o.interval(interval_line(size, done - last->done, dt.count()));
    *last = Mark{now, done};
  };
}

// Both tickers, when there are two.
Tick both(Tick a, Tick b) {
  if (!a) return b;
  if (!b) return a;
  return [a = std::move(a), b = std::move(b)](uint64_t done) {
    a(done);
    b(done);
  };
}

// When the current size's last message completed, for the report of a
// test that fails while measuring.
struct Silence {
  Clock::time_point t0 = Clock::now();
  Clock::time_point last = t0;
  uint64_t done = 0;
  Stall so_far() const {
    const auto secs = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    return Stall{secs(last - t0), secs(Clock::now() - last), false};
  }
};

Tick watch(const std::shared_ptr<Silence>& w) {
  return [w](uint64_t done) {
    if (done == w->done) return;
    w->done = done;
    w->last = Clock::now();
  };
}

void measure(PerfReport& r, const PerfOptions& o, std::vector<ClientSession>& sessions,
             uint32_t seed, Deadline end, const std::atomic<bool>& stop) {
  const Spec& s = o.spec;
  const auto start = Clock::now();
  std::vector<Lane> lanes;
  Barriers b;
  for (auto& x : sessions) {
    lanes.push_back(Lane{x.ep.get(), x.welcome.qp});
    b.socks.push_back(&x.sock);
    b.eps.push_back(x.ep.get());
  }
  b.plan = data_plan(s.op, s.kind, s.transport, true, s.bidir);
  b.seed = seed;
  b.counted.assign(sessions.size(), 0);
  // lat -D: the server's write ping-pong learns of the next size at the barrier.
  const bool barriers = s.bidir || s.validate || (s.kind == Kind::kLat && s.duration_s > 0);
  uint64_t stamp = 0;
  for (uint32_t step = 0; step < s.sizes.size(); ++step) {
    const uint32_t size = s.sizes[step];
    prepare(b, s, step);
    if (s.bidir) {
      if (auto g = go(b, step, end); !g) return fail(r, Stage::kTraffic, g.error());
    }
    std::vector<uint64_t> ops;
    const auto silence = std::make_shared<Silence>();
    const auto stalled = [&](const Error& e) {
      r.stalled_before_failure = silence->so_far();
      r.failed_size = size;
      fail(r, Stage::kTraffic, e);
    };
    if (s.kind == Kind::kBw) {
      auto x = run_bw(
          lanes, s, size, end, stop,
          both(both(ticker(o, start, step, s.iterations * lanes.size()), interval_ticker(o, size)),
               watch(silence)));
      if (!x) return stalled(x.error());
      ops = x->lane_ops;
      r.bw.push_back(*x);
    } else {
      auto l = run_lat(lanes[0], s, size, stamp, end, stop,
                       both(ticker(o, start, step, s.iterations), watch(silence)));
      if (!l) return stalled(l.error());
      ops = {l->stats.n};
      r.lat.push_back(std::move(*l));
    }
    if (barriers) {
      if (auto c = check_step(r, b, s, step, ops, end); !c)
        return fail(r, Stage::kTraffic, c.error());
    }
  }
}

// -b: each size's figures are the sum of both directions, as perftest's.
void add_server_direction(std::vector<BwSample>& bw, const std::vector<proto::DirSample>& theirs) {
  for (auto& b : bw) {
    for (const auto& t : theirs) {
      if (t.size != b.size || t.seconds <= 0) continue;
      const uint64_t bytes = t.msgs * t.size;
      b.bidir = true;
      b.in_gbps += gbps(bytes, t.seconds);
      b.msgs += t.msgs;
      b.mib_s += mib_per_s(bytes, t.seconds);
      b.mpps += mpps(t.msgs, t.seconds);
    }
    if (b.bidir) {
      b.avg_gbps = b.out_gbps + b.in_gbps;
      b.peak_gbps += b.in_gbps;
      b.interval_gbps.clear();  // ours are one direction of the sum
      b.interval_s = 0;
    }
  }
}

// Says done on every session and takes the server's side from its bye:
// its counters, completion errors, direction of a bidirectional run, CPU.
void farewells(PerfReport& r, const PerfOptions& o, std::vector<ClientSession>& sessions,
               uint64_t msgs) {
  proto::Done done;
  done.sent = msgs;
  done.received = r.ok ? msgs : 0;
  for (auto& s : sessions) {
    const Deadline d = deadline_in(std::chrono::seconds(3));
    if (!s.ep) continue;  // never opened: a session before it failed
    auto bye = s.farewell(done, d);
    if (!bye) continue;
    // The sessions overlap in time: keep the largest delta of each counter.
    for (const auto& [name, v] : bye->counters) {
      r.peer_counters[name] = std::max(r.peer_counters[name], v);
    }
    for (const auto& e : bye->wc_errors) r.peer_wc_errors.push_back(e);
    if (o.spec.bidir) add_server_direction(r.bw, bye->bw);
    if (o.spec.cpu_util && bye->wall_s > 0) {
      if (!r.peer_cpu) r.peer_cpu = PerfReport::CpuUse{};
      r.peer_cpu->cpu_s += bye->cpu_s;
      r.peer_cpu->wall_s = std::max(r.peer_cpu->wall_s, bye->wall_s);
    }
  }
}

}  // namespace

PerfReport run_perf(const PerfOptions& o, const std::atomic<bool>& stop) {
  PerfReport r;
  r.options = o;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  auto finish = [&]() {
    if (r.findings.empty()) r.findings = diagnose_setup(r, o);
    r.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return r;
  };
  if (auto why = validate(o.spec)) {
    fail(r, Stage::kOptions, plain_error("spec", *why));
    return finish();
  }
  if (o.cm && o.spec.transport != Transport::kRc) {
    fail(r, Stage::kOptions, plain_error("spec", "--cm connects RC queue pairs: drop -c UC/UD"));
    return finish();
  }
  std::vector<ClientSession> sessions(o.spec.qps);
  const uint32_t seed = conn::random_psn();
  r.ok = true;
  for (auto& s : sessions) {
    if (!open_session(r, o, end, seed, s)) return finish();
  }
  const auto& ep = *sessions[0].ep;
  r.placement = place(ep.fs, ep.device, o.cpu);
  // The path MTU the QP took (-m may have lowered it); UD has none of its own.
  const int mtu = ep.path_mtu != 0
                      ? ep.path_mtu
                      : conn::path_mtu_limit(std::min(r.local->active_mtu, r.peer->active_mtu),
                                             o.target.path_mtu);
  r.link = link_facts(ep, mtu);
  if (o.spec.transport == Transport::kUd && max_size(o.spec) > static_cast<uint32_t>(mtu)) {
    fail(r, Stage::kOptions,
         plain_error("spec",
                     fmt::format("a UD message cannot exceed the path MTU ({} bytes)", mtu)));
  }
  const Counters before = read_counters(ep.fs, ep.device, ep.port);
  const CpuClock cpu;
  if (r.ok) measure(r, o, sessions, seed, end, stop);
  if (o.spec.cpu_util) r.local_cpu = PerfReport::CpuUse{cpu.cpu_s(), cpu.wall_s()};
  if (o.progress) o.progress("");
  r.local_counters = delta(before, read_counters(ep.fs, ep.device, ep.port));
  uint64_t msgs = 0;
  for (const auto& b : r.bw) msgs += b.msgs;
  for (const auto& l : r.lat) msgs += 2 * l.stats.n;
  farewells(r, o, sessions, msgs);
  // Loss and congestion also explain a failed run; the verdict needs figures.
  r.findings =
      counter_findings(r.local_counters, r.peer_counters, r.local ? r.local->hostname : "local",
                       r.peer ? r.peer->hostname : o.target.host, msgs);
  if (r.ok) {
    for (auto& f : verdict_findings(o.spec, r.link, r.bw, r.lat)) r.findings.push_back(f);
    // A measured outage first: the retransmissions beside it are what it cost.
    if (auto f = stall_finding(o.spec, r.bw, r.lat)) r.findings.insert(r.findings.begin(), *f);
  } else if (r.stalled_before_failure) {
    // The failure is what the outage cost: the outage first.
    if (auto f = stall_before_failure_finding(
            o.spec, r.failed_size, *r.stalled_before_failure, r.error,
            sequence_gaps(r.local_counters) + sequence_gaps(r.peer_counters))) {
      r.findings.insert(r.findings.begin(), *f);
    }
  }
  if (auto f = validation_finding(r.validation_checks, r.validation_errors)) {
    r.findings.push_back(*f);
  }
  if (auto f = conn::certificate_expiry_finding(o.target.host, sessions.front().cert_expiring))
    r.findings.push_back(*f);
  return finish();
}

int exit_status(const PerfReport& r) {
  if (!r.ok) return 2;
  const int s = rdmacheck::exit_status(r.findings);
  return s != 0 ? s : (r.warnings.empty() ? 0 : 1);
}

}  // namespace rdmacheck::perf
