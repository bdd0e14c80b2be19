// `rdmacheck check HOST`: the whole three-layer test in one command. Layer 1
// (device): this host's doctor, the server's doctor (asked over the
// handshake) and a comparison of the two sides. Layer 2 (connection): RC
// ping with the size ladder, UD ping, and rdma_cm with --cm. Layer 3
// (performance): a short baseline with counters and a verdict. Stops at the
// first failed layer; bounded by one deadline. Measures only; report.h prints.
#pragma once

#include <atomic>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "check/priority.h"
#include "conn/ping.h"
#include "conn/tcp_probe.h"
#include "doctor/doctor.h"
#include "findings/finding.h"
#include "perf/client.h"
#include "perf/tcp_baseline.h"
#include "proto/messages.h"

namespace rdmacheck::check {
enum class LayerStatus { kPass, kWarn, kFail, kNotRun };
}  // namespace rdmacheck::check

namespace rdmacheck {
template <>
struct EnumNames<check::LayerStatus> {
  static constexpr std::array<std::pair<check::LayerStatus, std::string_view>, 4> table = {{
      // JSON's one casing for statuses (as findings' "ok", "warn", "fail");
      // the text shows them upper case (layer_status_text).
      {check::LayerStatus::kPass, "pass"},
      {check::LayerStatus::kWarn, "warn"},
      {check::LayerStatus::kFail, "fail"},
      {check::LayerStatus::kNotRun, "not_run"},
  }};
};
}  // namespace rdmacheck

namespace rdmacheck::check {

inline const char* layer_status_name(LayerStatus s) { return name_of(s).data(); }
// "PASS", "NOT RUN": how the text shows a status.
inline std::string layer_status_text(LayerStatus s) {
  std::string t(name_of(s));
  for (char& c : t)
    c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return t;
}

struct CheckOptions {
  conn::Target target;
  bool cm = false;     // also bring up an rdma_cm connection
  bool quick = false;  // skip the performance layer
  bool full = false;   // every operation and size in the performance layer
  std::chrono::seconds timeout{180};
  // -T or -S was on the command line: use target's class and level as they
  // are; else the priority this host's doctor read as configured for RoCE.
  bool priority_given = false;
};

struct LayerReport {
  Layer layer = Layer::kDevice;
  LayerStatus status = LayerStatus::kNotRun;
  std::string not_run_reason;
  std::vector<Finding> findings;
  double seconds = 0;
};

struct CheckReport {
  CheckOptions options;
  std::vector<LayerReport> layers;  // device, connection, performance
  nlohmann::json local_doctor;      // doctor::to_json of this host
  nlohmann::json peer_doctor;       // the server's, as it sent it (null when unavailable)
  std::optional<proto::HostFacts> local;
  std::optional<proto::HostFacts> peer;
  std::vector<conn::PingReport> pings;            // RC (+ladder), UD, rdma_cm
  std::optional<conn::TcpProbeReport> tcp_probe;  // TCP echoes between the same addresses
  std::vector<perf::PerfReport> perf;
  std::optional<perf::TcpBaseline> tcp_baseline;  // layer 3: TCP stream and echoes, same addresses
  PriorityChoice priority;                        // what the RDMA tests' packets carried, and why
  std::string expired_in;  // the step that was running when the deadline passed
  double elapsed_ms = 0;
};

CheckReport run_check(const CheckOptions& o, const std::atomic<bool>& stop);

// Pure pieces (tested): a layer's status from its findings, the comparison of
// both hosts' facts, the overall exit status and the performance layer's plan.
LayerStatus status_of(const std::vector<Finding>& fs);
std::vector<Finding> compare_hosts(const proto::HostFacts& local, const proto::HostFacts& peer,
                                   const std::string& peer_name);
int exit_status(const CheckReport& r);
// A performance test that did not finish: a WARN when it ran out of retries
// under loss that layer 2 measured or its own counters show (the cost of the
// loss, and the next tests still run), a FAIL otherwise; nullopt when its
// own findings already FAIL.
std::optional<Finding> unfinished_test_finding(const perf::PerfReport& rep, bool layer2_saw_loss);
// Layer 2's RC ping ran out of retries after round trips had passed, while
// its probes measured RoCE loss (roce-loss): the path carries RoCE and loses
// some of it. The retry exhaustion is that loss's cost, as a layer-3 test that
// runs out of retries under loss is (above): roce-packets-lost is folded into
// roce-loss as its consequence, and layer 3 still runs. The same holds where
// the probes counted no loss but the RC ping's port counted sequence gaps
// (frames arrived out of order or after a gap, conn::ConnObservation::seq_gaps):
// roce-packets-lost becomes a roce-loss of its own. False when it does not
// apply (no such findings, nothing was answered, or a rule or another FAIL
// explains the failure).
bool fold_retry_exhaustion_into_loss(const conn::PingReport& rc, std::vector<Finding>& layer2);

// The TCP probe as evidence on layer 2's failures and roce-loss: clean TCP
// beside failing RoCE points at something that treats RoCE (UDP 4791)
// alone; loss on both is the path; too few clean echoes beside a loss rate
// cannot tell the two apart, and the evidence says so.
void add_tcp_evidence(const conn::TcpProbeReport& tcp, const std::vector<conn::PingReport>& pings,
                      std::vector<Finding>& fs);
// Layer 3's tests: the baseline, or with --full every operation and size.
std::vector<perf::Spec> perf_plan(const CheckOptions& o);
// The most important findings first: failures, then warnings, by layer.
std::vector<Finding> top_findings(const CheckReport& r, size_t n);

// Adds f to the findings; the same id again (from the other host or another
// probe) merges into the one already there: both hosts named, each evidence
// line once (tagged with its host once two hosts speak).
void merge_finding(std::vector<Finding>& fs, Finding f);

// The port a host tests ("rxe0/1"): the one -d/--ib-port name, else the first
// ACTIVE port (of the named device). ports: (subject "dev/port", state), in
// the doctor's order. "" when nothing is known.
// (subject "dev/port", state) of every port a doctor report looked at, in its order.
std::vector<std::pair<std::string, std::string>> port_states(const doctor::DoctorReport& d);
std::string port_under_test(const std::vector<std::pair<std::string, std::string>>& ports,
                            const std::string& device, int port);
// Findings about any other port than under_test (subject "dev/port") become
// INFO: the device layer judges the port under test; another port's state,
// GIDs or netdev never stop a check.
void scope_to_port(std::vector<Finding>& fs, const std::string& under_test);
// The port a host's device layer judges: the one its side of the connection
// used ("rxe1/1", from the handshake's facts) once a connection said so; on a
// host with several NICs that is the device the route picked, not the first
// ACTIVE one. Before that (or when no connection got that far): the forced
// one, else the first ACTIVE one (port_under_test); "" when nothing is known.
std::string tested_port(const std::optional<proto::HostFacts>& used,
                        const std::vector<std::pair<std::string, std::string>>& ports,
                        const conn::DeviceChoice& forced);
// Whether the port under test is known before any connection: only when -d
// names the device; otherwise the route towards the peer picks it.
inline bool port_known_before_connection(const conn::DeviceChoice& forced) {
  return !forced.device.empty();
}

// rdma_cm resolved the peer to another device than the verbs path uses (the
// route's): the rdma_cm ping's failure is put down to that, with --src (and
// UCX_RDMA_CM_SOURCE_ADDRESS for UCX/MPI applications) as the fix. nullopt
// when both used the same device, or either side's facts are missing.
std::optional<Finding> cm_device_differs(const conn::PingReport& verbs, const conn::PingReport& cm);

// One root cause on top: when a probe saw RoCE packets die (mtu-black-hole,
// roce-packets-lost) and a doctor found a firewall rule matching RoCE, the
// rule's finding becomes the failure and the probe's finding its evidence.
void fold_under_firewall(std::vector<Finding>& connection);

// A configuration finding (doctor's) about a layer whose traffic passed: it
// explains no failure, so it is a WARN at most and says what passed.
Finding judged_by_traffic(Finding f, const std::string& what_passed);

}  // namespace rdmacheck::check
