#include <fmt/core.h>

#include "check/check_run.h"
#include "conn/client_session.h"
#include "doctor/doctor.h"
#include "doctor/sources.h"
#include "net/tcp.h"

namespace rdmacheck::check {
namespace {

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

}  // namespace

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

// Layer 1: both hosts' doctors.
namespace {

// This host's doctor: its device findings now, its port findings once the
// connection layer names the port, the rest for the layers that prove them.
void sort_local_findings(CheckRun& run) {
  const CheckOptions& o = run.o;
  const FsRoot& fs = o.target.fs;
  auto sources = doctor::sources_for(fs);
  const auto local_doc = doctor::run_doctor(fs, *sources);
  run.r.local_doctor = doctor::to_json(local_doc);
  // Without -d the route towards the peer picks the device, and only the
  // connection layer says which: this host's port findings wait for it, as
  // the peer's do (on a host with several NICs the first ACTIVE port is often
  // not the one the route uses).
  run.local_port_states = port_states(local_doc);
  const bool known = port_known_before_connection(o.target.dev);
  std::vector<Finding> local_findings = local_doc.findings();
  if (known) {
    scope_to_port(local_findings, tested_port(std::nullopt, run.local_port_states, o.target.dev));
  }
  for (auto f : local_findings) {
    f.host = run.me;
    if (f.layer == Layer::kDevice && !known && is_port_finding(f)) {
      run.local_ports.push_back(std::move(f));
    } else if (f.layer == Layer::kDevice) {
      merge(layer(run.r, Layer::kDevice), std::move(f));
    } else {
      run.deferred.push_back(std::move(f));
    }
  }
}

}  // namespace

bool device_layer(CheckRun& run) {
  const CheckOptions& o = run.o;
  CheckReport& r = run.r;
  auto& deferred = run.deferred;
  auto& peer_ports = run.peer_ports;
  auto expired = [&](const std::string& step) { return run.expired(step); };
  auto judge_ports = [&] { run.judge_ports(); };
  const Deadline end = run.end;
  // Their connection- and performance-layer findings wait for the layers
  // that prove them.
  auto t1 = Clock::now();
  sort_local_findings(run);
  if (expired("the device layer")) {
    judge_ports();
    not_run(r, 0, "the deadline passed during " + r.expired_in);
    return false;
  }
  // The peer's port findings wait for the connection layer to say which port
  // its server uses; without that answer they count as they are.
  auto asked = ask_peer_doctor(o, std::min(end, deadline_in(std::chrono::seconds(30))));
  if (!asked.unreached.empty()) {
    // Named now, within the connection's own timeout: the layers after it
    // would reach the same nothing.
    judge_ports();
    finish_layer(layer(r, Layer::kDevice), t1);
    for (auto& f : asked.unreached) merge(layer(r, Layer::kConnection), std::move(f));
    finish_layer(layer(r, Layer::kConnection), t1);
    not_run(r, 2, fmt::format("{} could not be asked for its doctor", o.target.host));
    return false;
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
    return false;
  }
  return true;
}

void choose_priority(CheckRun& run) {
  const CheckOptions& o = run.o;
  CheckReport& r = run.r;
  // The priority of the RDMA tests' packets: -T/-S as given, else the class
  // this host's doctor read as configured for RoCE (PFC, trust, DSCP map).
  conn::Target& target = run.target;
  if (o.priority_given) {
    r.priority = {.traffic_class = target.traffic_class,
                  .sl = target.sl,
                  .source = PrioritySource::kUser,
                  .why = "given with -T/-S"};
  } else {
    r.priority = priority_from_doctor(
        r.local_doctor,
        port_under_test(run.local_port_states, o.target.dev.device, o.target.dev.ib_port));
    target.traffic_class = r.priority.traffic_class;
    target.sl = r.priority.sl;
  }
}

}  // namespace rdmacheck::check
