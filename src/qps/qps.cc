#include "qps/qps.h"

#include <fmt/core.h>

#include <cerrno>

namespace rdmacheck::qps {
namespace {

std::string opt(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string qp_line(const QpInfo& q) {
  return fmt::format("{}/{} lqpn {} rqpn {} {} {} {}", q.device, opt(q.port), q.lqpn, opt(q.rqpn),
                     q.type, name_of(q.state),
                     q.kernel ? "[" + q.comm + "]" : fmt::format("pid {} {}", opt(q.pid), q.comm));
}

// Why a QP sits in a state other than RTS.
const char* why(QpState state) {
  if (state == QpState::kInit) {
    return "INIT: created and bound to a port, but the peer's QPN/GID never arrived to move it "
           "to RTR (the out-of-band exchange over TCP or RDMA-CM stalled)";
  }
  if (state == QpState::kRtr) {
    return "RTR: can receive but not send; the owner has not moved it to RTS (waiting for the "
           "peer, or a receive-only QP)";
  }
  if (state == QpState::kSqe || state == QpState::kSqd)
    return "send queue error/drained: sends are stopped";
  return "";
}

}  // namespace

std::string explain(const Error& e) {
  if (e.errnum == EPROTONOSUPPORT) {
    return e.message() +
           ": this kernel has no RDMA netlink (ib_core is not loaded), so there "
           "are no QPs";
  }
  return e.message();
}

int QpsReport::exit_status() const { return error ? 2 : rdmacheck::exit_status(findings); }

std::vector<Finding> diagnose_qps(const std::vector<QpInfo>& qps) {
  std::vector<Finding> out;
  Finding err{.id = FindingId::kQpInError,
              .severity = Severity::kWarn,
              .layer = Layer::kConnection,
              .summary = "",
              .evidence = {},
              .fix =
                  "a work request failed (retry exceeded, remote access or length error): "
                  "the owner must destroy and re-create the QP; the hardware counters and "
                  "the completion status tell why"};
  Finding waiting{.id = FindingId::kQpNotReady,
                  .severity = Severity::kInfo,
                  .layer = Layer::kConnection,
                  .summary = "",
                  .evidence = {},
                  .fix =
                      "normal for a moment during connection setup; if it stays, check the "
                      "peer's side (rdmacheck qps there) and the path between (rdmacheck "
                      "ping)"};
  for (const auto& q : qps) {
    if (q.state == QpState::kErr) {
      err.evidence.push_back(qp_line(q));
    } else if (q.state == QpState::kInit || q.state == QpState::kRtr || q.state == QpState::kSqe ||
               q.state == QpState::kSqd) {
      waiting.evidence.push_back(qp_line(q) + " - " + why(q.state));
    }
  }
  if (!err.evidence.empty()) {
    err.summary = fmt::format("{} QP{} in ERROR state", err.evidence.size(),
                              err.evidence.size() == 1 ? " is" : "s are");
    out.push_back(std::move(err));
  }
  if (!waiting.evidence.empty()) {
    waiting.summary = fmt::format("{} QP{} not ready to send (INIT/RTR)", waiting.evidence.size(),
                                  waiting.evidence.size() == 1 ? " is" : "s are");
    out.push_back(std::move(waiting));
  }
  return out;
}

QpsReport make_report(Result<std::vector<QpInfo>> qps) {
  QpsReport r;
  if (!qps) {
    r.error = qps.error();
    return r;
  }
  r.qps = std::move(*qps);
  r.findings = diagnose_qps(r.qps);
  return r;
}

nlohmann::json to_json(const QpsReport& r) {
  nlohmann::json doc = {{"qps", nlohmann::json::array()},
                        {"error", r.error ? nlohmann::json(explain(*r.error)) : nlohmann::json()}};
  for (const auto& q : r.qps) doc["qps"].push_back(to_json(q));
  doc["findings"] = rdmacheck::to_json(r.findings);
  return doc;
}

std::string format_text(const QpsReport& r, const TextStyle& /*style*/) {
  std::string text;
  if (r.error) {
    text += "cannot list QPs: " + explain(*r.error) + "\n";
  } else if (r.qps.empty()) {
    text += "no QPs on this machine\n";
  } else {
    text += fmt::format("{:<10} {:>4} {:>8} {:>8} {:<10} {:<5} {:>7} {}\n", "DEVICE", "PORT",
                        "LQPN", "RQPN", "TYPE", "STATE", "PID", "COMM");
  }
  for (const auto& q : r.qps) {
    const std::string mark = q.state == QpState::kRts || q.state == QpState::kReset ? ""
                             : q.state == QpState::kErr                             ? "  <- ERROR"
                                                        : "  <- not ready";
    text += fmt::format("{:<10} {:>4} {:>8} {:>8} {:<10} {:<5} {:>7} {}{}\n", q.device, opt(q.port),
                        q.lqpn, opt(q.rqpn), q.type, name_of(q.state), opt(q.pid),
                        q.kernel ? "[" + q.comm + "]" : q.comm, mark);
  }
  if (!r.findings.empty()) text += "\n";
  for (const auto& f : r.findings) text += format_finding(f);
  return text;
}

}  // namespace rdmacheck::qps
