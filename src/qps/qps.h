// `rdmacheck qps`: every QP on the machine with its state, owner and peer,
// and the ones sitting in INIT, RTR or ERR named with what that means.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/text_style.h"
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

// The JSON document, and the table with the findings.
nlohmann::json to_json(const QpsReport& r);
std::string format_text(const QpsReport& r, const TextStyle& style = {});

}  // namespace rdmacheck::qps
