// Lossless-Ethernet settings of a netdev as DCB netlink reports them (what
// `dcb pfc show dev DEV` and `mlnx_qos -i DEV` read): PFC per priority, the
// pause frames counted per priority, and whether DSCP is trusted.
#pragma once

#include <linux/netlink.h>

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::doctor {

struct DcbState {
  int pfc_cap = 0;                            // traffic classes that can do PFC
  uint8_t pfc_enabled = 0;                    // bit N: PFC on for priority N
  std::array<uint64_t, 8> pfc_requests{};     // PFC pause frames sent, per priority
  std::array<uint64_t, 8> pfc_indications{};  // PFC pause frames received, per priority
  bool pfc_present = false;                   // the reply carried DCB_ATTR_IEEE_PFC
  int dscp_app_entries = 0;                   // APP entries with the DSCP selector: DSCP is trusted
  std::map<int, int> dscp_priority;           // those entries: DSCP -> priority
  [[nodiscard]] std::vector<int> pfc_priorities() const;
  [[nodiscard]] std::string trust() const { return dscp_app_entries > 0 ? "dscp" : "pcp"; }
};

// Pure: the DcbState in a DCB_CMD_IEEE_GET reply.
Result<DcbState> parse_dcb_reply(const nlmsghdr* nlh);

// DCB_CMD_IEEE_GET for the netdev; fails with EOPNOTSUPP when its driver has no DCB.
Result<DcbState> read_dcb(const std::string& netdev);

nlohmann::json to_json(const DcbState& d);
// {"26": 3, ...}: the DSCP APP entries as JSON (object keys are strings).
nlohmann::json dscp_map_json(const std::map<int, int>& m);
DcbState dcb_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::doctor
