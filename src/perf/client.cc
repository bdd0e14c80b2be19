#include "perf/client.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "conn/diagnose.h"
#include "conn/endpoint.h"
#include "net/tcp.h"
#include "perf/cpu_time.h"
#include "perf/sync.h"
#include "perf/validate.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::perf {
namespace {

struct Session {
  Fd sock;
  std::unique_ptr<conn::Endpoint> ep;
  proto::Welcome welcome;
};

void fail(PerfReport& r, const char* stage, const Error& e) {
  r.ok = false;
  r.failed_stage = stage;
  r.error = e.message();
  r.cause = e;
}

// A run that failed before measuring gets the connection layer's diagnosis
// (server not listening, peer unreachable, memlock, ...), as ping does.
std::vector<Finding> diagnose_setup(const PerfReport& r, const PerfOptions& o) {
  if (r.ok || r.failed_stage == "traffic" || r.cause.call == "spec") return {};
  conn::ConnObservation obs;
  obs.host = o.host;
  obs.tcp_port = o.tcp_port;
  obs.failed =
      r.failed_stage == "connect"
          ? (r.cause.call == "getaddrinfo" ? conn::Stage::kResolve : conn::Stage::kTcpConnect)
      : r.failed_stage == "handshake" ? conn::Stage::kHandshake
      : r.failed_stage == "qp"        ? conn::Stage::kQpSetup
                                      : conn::Stage::kLocalSetup;
  obs.errnum = r.cause.errnum;
  obs.failed_call = r.cause.call;
  obs.error = r.error;
  obs.local = r.local;
  obs.peer = r.peer;
  return conn::diagnose(obs);
}

proto::Hello hello_for(const PerfOptions& o, const conn::Endpoint& ep, uint32_t seed) {
  const Spec& s = o.spec;
  proto::Hello h;
  h.test.kind = kind_name(s.kind);
  h.test.transport = s.transport;
  h.test.op = op_name(s.op);
  h.test.max_size = max_size(s);
  h.test.depth = s.rx_depth;
  h.test.cm = o.cm;
  proto::PerfParams p;
  p.sizes = s.sizes;
  p.iterations = s.iterations;
  p.duration_ms = static_cast<uint32_t>(s.duration_s * 1000);
  p.bidir = s.bidir;
  p.validate = s.validate;
  p.seed = seed;
  p.tx_depth = s.tx_depth;
  p.post_list = s.post_list;
  p.cq_mod = s.cq_mod;
  p.inline_size = s.inline_size;
  h.test.perf = p;
  h.facts = conn::local_facts(ep);
  h.qp = conn::local_qp_info(ep);
  return h;
}

// The server's next message, parsed as MSG; an error message from it comes
// back as an error in its own words.
template <typename Msg>
Result<Msg> receive(const Fd& sock, Deadline d, Result<Msg> (*parse)(const nlohmann::json&)) {
  auto frame = recv_frame(sock, d);
  if (!frame) return frame.error();
  if (proto::message_type(*frame) == "error") {
    return plain_error("handshake", "server: " + proto::error_text(*frame));
  }
  return parse(*frame);
}

// --cm: connect through librdmacm with the server's token, then learn where
// its buffer is (the connection manager's handshake does not say).
bool cm_establish(PerfReport& r, const PerfOptions& o, Deadline end, Session& s,
                  std::vector<proto::Step>& timeline) {
  if (s.welcome.cm_token == 0) {
    fail(r, "handshake", plain_error("handshake", "the server sent no rdma_cm token"));
    return false;
  }
  const std::string token(reinterpret_cast<const char*>(&s.welcome.cm_token),
                          sizeof s.welcome.cm_token);
  const Deadline d = std::min(end, deadline_in(std::chrono::seconds(10)));
  if (auto c = conn::cm_connect(*s.ep, token, o.timing, d, timeline); !c) {
    fail(r, "qp", c.error());
    return false;
  }
  auto ready = receive(s.sock, d, proto::parse_ready);
  if (!ready) {
    fail(r, "handshake", ready.error());
    return false;
  }
  s.welcome.qp = ready->qp;
  return true;
}

// TCP, endpoint, hello/welcome and the QP to RTS for one queue pair.
bool open_session(PerfReport& r, const PerfOptions& o, Deadline end, uint32_t seed, Session& s) {
  auto sock = tcp_connect(o.host, o.tcp_port, std::min(end, deadline_in(std::chrono::seconds(5))));
  if (!sock) {
    fail(r, "connect", sock.error());
    return false;
  }
  s.sock = std::move(*sock);
  conn::EndpointOptions eo;
  eo.device = o.device;
  eo.port = o.ib_port;
  eo.gid_index = o.gid_index;
  eo.local_address = local_address(s.sock);
  eo.src = o.src;
  eo.transport = o.spec.transport;
  eo.buffer_size = max_size(o.spec);
  // What the server does to this buffer: answer a write ping-pong with its
  // writes, or run the whole test back at us (-b).
  const bool pingpong_write = o.spec.kind == Kind::kLat && o.spec.op == Op::kWrite;
  eo.access = o.spec.bidir     ? remote_access(o.spec.op)
              : pingpong_write ? IBV_ACCESS_REMOTE_WRITE
                               : 0;
  const bool receives = o.spec.bidir && two_sided(o.spec.op);
  eo.depth = std::max(o.spec.tx_depth, receives ? o.spec.rx_depth : 1u);
  eo.inline_size = o.spec.inline_size;
  std::vector<proto::Step> timeline;
  const Deadline setup_d = std::min(end, deadline_in(std::chrono::seconds(10)));
  auto ep = o.cm ? conn::open_cm_endpoint(eo, peer_address(s.sock), o.tcp_port, setup_d, timeline)
                 : conn::open_endpoint(eo, timeline);
  if (!ep) {
    fail(r, ep.error().call == "rdma_cm" ? "qp" : "setup", ep.error());
    (void)send_frame(s.sock, proto::error_message("client setup failed: " + ep.error().message()),
                     deadline_in(std::chrono::seconds(1)));
    return false;
  }
  s.ep = std::make_unique<conn::Endpoint>(std::move(*ep));
  r.warnings.insert(r.warnings.end(), s.ep->warnings.begin(), s.ep->warnings.end());
  r.local = conn::local_facts(*s.ep);
  // -b with send or write_imm: the server's messages need our receives first.
  for (uint32_t i = 0; receives && i < o.spec.rx_depth; ++i) {
    if (auto p = conn::post_recv(*s.ep, 0, static_cast<uint32_t>(s.ep->half)); !p) {
      fail(r, "setup", p.error());
      return false;
    }
  }
  const Deadline hs = std::min(end, deadline_in(std::chrono::seconds(10)));
  if (auto sent = send_frame(s.sock, proto::to_json(hello_for(o, *s.ep, seed)), hs); !sent) {
    fail(r, "handshake", sent.error());
    return false;
  }
  auto welcome = receive(s.sock, hs, proto::parse_welcome);
  if (!welcome) {
    fail(r, "handshake", welcome.error());
    return false;
  }
  s.welcome = *welcome;
  r.peer = welcome->facts;
  if (o.cm) return cm_establish(r, o, end, s, timeline);
  if (auto c = conn::connect_qp(*s.ep, welcome->qp, welcome->facts.active_mtu, o.timing, timeline);
      !c) {
    fail(r, "qp", c.error());
    return false;
  }
  return true;
}

LinkFacts link_facts(const conn::Endpoint& ep, int mtu) {
  LinkFacts l;
  l.device = ep.device;
  l.ethernet = ep.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  l.port_gbps = conn::port_rate_gbps(ep.port_attr);
  l.mtu = mtu;
  const FsRoot fs("/");
  for (const auto& d : read_rdma_devices(fs)) {
    if (d.name == ep.device) l.driver = d.driver;
  }
  if (!ep.netdev.empty()) {
    const int mbps =
        std::atoi(fs.read_line("/sys/class/net/" + ep.netdev + "/speed").value_or("0").c_str());
    if (mbps > 0) l.netdev_gbps = mbps / 1000.0;
  }
  const std::string dev = "/sys/class/infiniband/" + ep.device + "/device/";
  const auto speed = fs.read_line(dev + "current_link_speed");  // "8.0 GT/s PCIe"
  const auto width = fs.read_line(dev + "current_link_width");
  if (speed && width) {
    const double gt = std::atof(speed->c_str());
    const int w = std::atoi(width->c_str());
    if (gt > 0 && w > 0) l.pcie_gbps = pcie_usable_gbps(gt, w);
  }
  return l;
}

// --validate and -b: what each lane's server and we ourselves check, and the
// barriers that keep both sides on the same size.
struct Barriers {
  std::vector<const Fd*> socks;
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
    msgs[l].phase = "check";
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
    o.progress(fmt::format("{} {} B (size {} of {}): {}", kind_name(s.kind), s.sizes[step],
                           step + 1, s.sizes.size(), how));
  };
}

void measure(PerfReport& r, const PerfOptions& o, std::vector<Session>& sessions, uint32_t seed,
             Deadline end, const std::atomic<bool>& stop) {
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
  const bool barriers = s.bidir || s.validate;
  uint64_t stamp = 0;
  for (uint32_t step = 0; step < s.sizes.size(); ++step) {
    const uint32_t size = s.sizes[step];
    prepare(b, s, step);
    if (s.bidir) {
      if (auto g = go(b, step, end); !g) return fail(r, "traffic", g.error());
    }
    std::vector<uint64_t> ops;
    if (s.kind == Kind::kBw) {
      auto x =
          run_bw(lanes, s, size, end, stop, ticker(o, start, step, s.iterations * lanes.size()));
      if (!x) return fail(r, "traffic", x.error());
      ops = x->lane_ops;
      r.bw.push_back(*x);
    } else {
      auto l = run_lat(lanes[0], s, size, stamp, end, stop, ticker(o, start, step, s.iterations));
      if (!l) return fail(r, "traffic", l.error());
      ops = {l->stats.n};
      r.lat.push_back(std::move(*l));
    }
    if (barriers) {
      if (auto c = check_step(r, b, s, step, ops, end); !c) return fail(r, "traffic", c.error());
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
    fail(r, "setup", plain_error("spec", *why));
    return finish();
  }
  if (o.cm && o.spec.transport != "rc") {
    fail(r, "setup", plain_error("spec", "--cm connects RC queue pairs: drop -c UC/UD"));
    return finish();
  }
  std::vector<Session> sessions(o.spec.qps);
  const uint32_t seed = conn::random_psn();
  r.ok = true;
  for (auto& s : sessions) {
    if (!open_session(r, o, end, seed, s)) return finish();
  }
  const auto& ep = *sessions[0].ep;
  r.placement = place(FsRoot("/"), ep.device, o.cpu);
  const int mtu = std::min(r.local->active_mtu, r.peer->active_mtu);
  r.link = link_facts(ep, mtu);
  if (o.spec.transport == "ud" && max_size(o.spec) > static_cast<uint32_t>(mtu)) {
    fail(r, "setup",
         plain_error("spec", fmt::format("a UD message cannot exceed the path MTU "
                                         "({} bytes)",
                                         mtu)));
  }
  const Counters before = read_counters(FsRoot("/"), ep.device, ep.port);
  const CpuClock cpu;
  if (r.ok) measure(r, o, sessions, seed, end, stop);
  if (o.spec.cpu_util) r.local_cpu = PerfReport::CpuUse{cpu.cpu_s(), cpu.wall_s()};
  if (o.progress) o.progress("");
  r.local_counters = delta(before, read_counters(FsRoot("/"), ep.device, ep.port));
  uint64_t msgs = 0;
  for (const auto& b : r.bw) msgs += b.msgs;
  for (const auto& l : r.lat) msgs += 2 * l.stats.n;
  proto::Done done;
  done.sent = msgs;
  done.received = r.ok ? msgs : 0;
  for (auto& s : sessions) {
    const Deadline d = deadline_in(std::chrono::seconds(3));
    if (!send_frame(s.sock, proto::to_json(done), d)) continue;
    auto frame = recv_frame(s.sock, d);
    auto bye = frame ? proto::parse_bye(*frame) : Result<proto::Bye>(frame.error());
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
  // Loss and congestion also explain a failed run; the verdict needs figures.
  r.findings =
      counter_findings(r.local_counters, r.peer_counters, r.local ? r.local->hostname : "local",
                       r.peer ? r.peer->hostname : o.host, msgs);
  if (r.ok) {
    for (auto& f : verdict_findings(o.spec, r.link, r.bw, r.lat)) r.findings.push_back(f);
  }
  if (auto f = validation_finding(r.validation_checks, r.validation_errors)) {
    r.findings.push_back(*f);
  }
  return finish();
}

int exit_status(const PerfReport& r) {
  if (!r.ok) return 2;
  const int s = rdmacheck::exit_status(r.findings);
  return s != 0 ? s : (r.warnings.empty() ? 0 : 1);
}

}  // namespace rdmacheck::perf
