// Every QP on the machine, as the kernel's resource tracker reports it over
// RDMA netlink (RDMA_NLDEV_CMD_RES_QP_GET, what `rdma res show qp` prints).
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "base/result.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::qps {

// ib_qp_state, as iproute2's rdma tool names it.
enum class QpState { kReset, kInit, kRtr, kRts, kSqd, kSqe, kErr, kUnknown };

}  // namespace rdmacheck::qps

namespace rdmacheck {
template <>
struct EnumNames<qps::QpState> {
  using S = qps::QpState;
  static constexpr std::array<std::pair<S, std::string_view>, 8> table = {{
      {S::kReset, "RESET"},
      {S::kInit, "INIT"},
      {S::kRtr, "RTR"},
      {S::kRts, "RTS"},
      {S::kSqd, "SQD"},
      {S::kSqe, "SQE"},
      {S::kErr, "ERR"},
      {S::kUnknown, "UNKNOWN"},
  }};
};
}  // namespace rdmacheck

namespace rdmacheck::qps {

struct QpInfo {
  std::string device;  // "rxe0"
  uint32_t dev_index = 0;
  std::optional<uint32_t> port;  // absent until the QP was bound to a port (INIT)
  uint32_t lqpn = 0;
  std::optional<uint32_t> rqpn;  // connected QPs only
  std::string type;              // "RC", "UD", "GSI", ...
  QpState state = QpState::kUnknown;
  std::optional<uint32_t> pid;  // user QPs
  std::string comm;             // the process's name, or the kernel client's ("ib_core")
  bool kernel = false;          // owned by a kernel client, not a process
  std::optional<uint32_t> sq_psn;
  std::optional<uint32_t> rq_psn;
  std::optional<uint32_t> pdn;
};

// ib_qp_type and ib_qp_state numbers as iproute2's rdma tool names them.
const char* qp_type_name(uint8_t t);
QpState qp_state_of(uint8_t s);

// Pure: the QPs in one RDMA_NLDEV_CMD_RES_QP_GET reply message.
Result<std::vector<QpInfo>> parse_qp_message(const nlmsghdr* nlh);
// Pure: {index, name} of one RDMA_NLDEV_CMD_GET reply message.
Result<std::pair<uint32_t, std::string>> parse_device_message(const nlmsghdr* nlh);

// Dumps every device's QPs; comm of user QPs comes from /proc/PID/comm under fs.
Result<std::vector<QpInfo>> read_qps(const FsRoot& fs);

nlohmann::json to_json(const QpInfo& q);
QpInfo qp_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::qps
