#include "perf/client_setup.h"

#include <fmt/core.h>

#include <algorithm>

#include "conn/diagnose.h"
#include "conn/endpoint.h"
#include "conn/user_selection.h"
#include "doctor/check.h"
#include "net/tcp.h"
#include "perf/validate.h"
#include "sysfs/port_counters.h"
#include "sysfs/rdma_sysfs.h"
#include "verbs/port_rate.h"

namespace rdmacheck::perf {

using conn::ClientSession;
using conn::Stage;

void fail(PerfReport& r, Stage stage, const Error& e) {
  r.ok = false;
  r.failed = stage;
  r.error = e.message();
  r.cause = e;
}

std::vector<Finding> diagnose_setup(const PerfReport& r, const PerfOptions& o) {
  if (r.ok || r.failed == Stage::kOptions) return {};
  conn::ConnObservation obs;
  conn::observe_choices(obs, o.target, o.cm, r.local_address);
  obs.host = o.target.host;
  obs.tcp_port = o.target.tcp_port;
  obs.failed = r.failed;
  obs.errnum = r.cause.errnum;
  if (r.failed == Stage::kLocalSetup) {
    obs.memlock_limit = conn::effective_memlock_limit(o.target.fs);
    obs.no_rdma = doctor::no_rdma_device(o.target.fs);
  }
  obs.error = r.error;
  obs.cm_break = r.cm_break;
  obs.server_refused = r.server_refused;
  obs.refusal_code = r.refusal_code;
  obs.auth = r.auth;
  obs.local = r.local;
  obs.peer = r.peer;
  auto found = conn::diagnose(obs);
  if (r.failed != Stage::kTraffic || conn::session_tampered(obs)) return found;
  const bool forced = !found.empty() && (found.front().id == FindingId::kForcedDeviceUnusable ||
                                         found.front().id == FindingId::kForcedPortUnusable ||
                                         found.front().id == FindingId::kForcedGidUnusable ||
                                         found.front().id == FindingId::kCmDeviceDiffers);
  return forced ? std::vector<Finding>{found.front()} : std::vector<Finding>{};
}

namespace {

conn::SessionRequest request_for(const PerfOptions& o, uint32_t seed) {
  const Spec& s = o.spec;
  conn::SessionRequest req;
  req.test.kind = s.kind;
  req.test.transport = s.transport;
  req.test.op = s.op;
  req.test.max_size = max_size(s);
  req.test.depth = s.rx_depth;
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
  req.test.perf = p;
  req.cm = o.cm;
  // What the server does to this buffer: answer a write ping-pong with its
  // writes, or run the whole test back at us (-b).
  const bool pingpong_write = s.kind == Kind::kLat && s.op == Op::kWrite;
  req.access = s.bidir ? remote_access(s.op) : pingpong_write ? IBV_ACCESS_REMOTE_WRITE : 0;
  const bool receives = s.bidir && two_sided(s.op);
  req.depth = std::max(s.tx_depth, receives ? s.rx_depth : 1u);
  req.inline_size = s.inline_size;
  req.timing = o.timing;
  req.ack_timeout = o.ack_timeout;
  // -b with send or write_imm: the server's messages need our receives first.
  if (receives) {
    req.before_hello = [n = s.rx_depth](conn::Endpoint& ep) -> Status {
      for (uint32_t i = 0; i < n; ++i) {
        if (auto r = conn::post_recv(ep, 0, static_cast<uint32_t>(ep.half)); !r) return r.error();
      }
      return ok_status();
    };
  }
  return req;
}

}  // namespace

bool open_session(PerfReport& r, const PerfOptions& o, Deadline end, uint32_t seed,
                  ClientSession& s) {
  auto opened = conn::open_client_session(o.target, request_for(o, seed), end);
  if (!opened) {
    conn::SessionFailure& f = opened.error();
    fail(r, f.stage, f.error);
    r.local_address = f.local_address;
    r.cm_break = f.cm_break;
    r.server_refused = f.server_refused;
    r.refusal_code = f.refusal_code;
    r.auth = f.auth;
    if (f.local) r.local = f.local;
    if (f.peer) r.peer = f.peer;
    r.warnings.insert(r.warnings.end(), f.warnings.begin(), f.warnings.end());
    return false;
  }
  s = std::move(*opened);
  r.local_address = local_address(s.sock);
  r.warnings.insert(r.warnings.end(), s.ep->warnings.begin(), s.ep->warnings.end());
  r.local = conn::local_facts(*s.ep);
  r.peer = s.welcome.facts;
  return true;
}

LinkFacts link_facts(const conn::Endpoint& ep, int mtu) {
  LinkFacts l;
  l.device = ep.device;
  l.ethernet = ep.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  l.port_gbps = verbs::port_rate_gbps(ep.port_attr);
  l.mtu = mtu;
  const FsRoot& fs = ep.fs;
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

}  // namespace rdmacheck::perf
