#include "perf/client.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "conn/diagnose.h"
#include "conn/endpoint.h"
#include "net/tcp.h"
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

proto::Hello hello_for(const Spec& s, const conn::Endpoint& ep) {
  proto::Hello h;
  h.test.kind = kind_name(s.kind);
  h.test.transport = s.transport;
  h.test.op = op_name(s.op);
  h.test.max_size = max_size(s);
  h.test.depth = s.rx_depth;
  h.test.perf =
      proto::PerfParams{s.sizes, s.iterations, static_cast<uint32_t>(s.duration_s * 1000)};
  h.facts = conn::local_facts(ep);
  h.qp = conn::local_qp_info(ep);
  return h;
}

// TCP, endpoint, hello/welcome and the QP to RTS for one queue pair.
bool open_session(PerfReport& r, const PerfOptions& o, Deadline end, Session& s) {
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
  eo.transport = o.spec.transport;
  eo.buffer_size = max_size(o.spec);
  // A write ping-pong is answered by the server's writes into this buffer.
  eo.access = o.spec.kind == Kind::kLat && o.spec.op == Op::kWrite ? IBV_ACCESS_REMOTE_WRITE : 0;
  eo.depth = std::max(o.spec.tx_depth, two_sided(o.spec.op) ? o.spec.rx_depth : 1u);
  eo.inline_size = o.spec.inline_size;
  std::vector<proto::Step> timeline;
  auto ep = conn::open_endpoint(eo, timeline);
  if (!ep) {
    fail(r, "setup", ep.error());
    (void)send_frame(s.sock, proto::error_message("client setup failed: " + ep.error().message()),
                     deadline_in(std::chrono::seconds(1)));
    return false;
  }
  s.ep = std::make_unique<conn::Endpoint>(std::move(*ep));
  for (const auto& w : s.ep->warnings) r.warnings.push_back(w);
  r.local = conn::local_facts(*s.ep);
  const Deadline hs = std::min(end, deadline_in(std::chrono::seconds(10)));
  if (auto sent = send_frame(s.sock, proto::to_json(hello_for(o.spec, *s.ep)), hs); !sent) {
    fail(r, "handshake", sent.error());
    return false;
  }
  auto reply = recv_frame(s.sock, hs);
  auto welcome = reply ? proto::parse_welcome(*reply) : Result<proto::Welcome>(reply.error());
  if (!welcome) {
    fail(r, "handshake", welcome.error());
    return false;
  }
  s.welcome = *welcome;
  r.peer = welcome->facts;
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

void measure(PerfReport& r, const PerfOptions& o, std::vector<Session>& sessions, Deadline end,
             const std::atomic<bool>& stop) {
  std::vector<Lane> lanes;
  for (auto& s : sessions) lanes.push_back(Lane{s.ep.get(), s.welcome.qp});
  uint64_t stamp = 0;
  for (uint32_t size : o.spec.sizes) {
    if (o.spec.kind == Kind::kBw) {
      auto b = run_bw(lanes, o.spec, size, end, stop);
      if (!b) return fail(r, "traffic", b.error());
      r.bw.push_back(*b);
    } else {
      auto l = run_lat(lanes[0], o.spec, size, stamp, end, stop);
      if (!l) return fail(r, "traffic", l.error());
      r.lat.push_back(std::move(*l));
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
  std::vector<Session> sessions(o.spec.qps);
  r.ok = true;
  for (auto& s : sessions) {
    if (!open_session(r, o, end, s)) return finish();
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
  if (r.ok) measure(r, o, sessions, end, stop);
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
  }
  // Loss and congestion also explain a failed run; the verdict needs figures.
  r.findings =
      counter_findings(r.local_counters, r.peer_counters, r.local ? r.local->hostname : "local",
                       r.peer ? r.peer->hostname : o.host, msgs);
  if (r.ok) {
    for (auto& f : verdict_findings(o.spec, r.link, r.bw, r.lat)) r.findings.push_back(f);
  }
  return finish();
}

int exit_status(const PerfReport& r) {
  if (!r.ok) return 2;
  const int s = rdmacheck::exit_status(r.findings);
  return s != 0 ? s : (r.warnings.empty() ? 0 : 1);
}

}  // namespace rdmacheck::perf
