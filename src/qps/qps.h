// `rdmacheck qps`: every QP on the machine with its state, owner and peer,
// and the ones sitting in INIT, RTR or ERR named with what that means.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "findings/finding.h"
#include "qps/qp_list.h"

namespace rdmacheck::qps {

struct QpsReport {
  std::vector<QpInfo> qps;
  std::optional<Error> error;  // the QP list could not be read
  std::vector<Finding> findings;
  [[nodiscard]] int exit_status() const;
};

// Pure: findings for the QPs not in RTS (ERR, INIT, RTR, SQE/SQD).
std::vector<Finding> diagnose_qps(const std::vector<QpInfo>& qps);
QpsReport make_report(Result<std::vector<QpInfo>> qps);
// The error's message, with what it means when the kernel has no RDMA netlink.
std::string explain(const Error& e);

// The table (or JSON document) and the findings, from one walk.
std::string render(const QpsReport& r, bool json);

}  // namespace rdmacheck::qps
