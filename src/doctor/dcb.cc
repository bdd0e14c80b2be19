#include "doctor/dcb.h"

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "base/netlink.h"

namespace rdmacheck::doctor {

std::vector<int> DcbState::pfc_priorities() const {
  std::vector<int> out;
  for (int p = 0; p < 8; ++p) {
    if ((pfc_enabled >> p & 1) != 0) out.push_back(p);
  }
  return out;
}

Result<DcbState> parse_dcb_reply(const nlmsghdr* nlh) {
  if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(dcbmsg))) {
    return plain_error("DCB_CMD_IEEE_GET", "short reply");
  }
  DcbState d;
  const nlattr* ieee = nullptr;
  for_each_attr(nlh, sizeof(dcbmsg), [&](const nlattr* a) {
    if (mnl_attr_get_type(a) == DCB_ATTR_IEEE) ieee = a;
  });
  if (ieee == nullptr) return plain_error("DCB_CMD_IEEE_GET", "reply without DCB_ATTR_IEEE");
  for_each_nested(ieee, [&](const nlattr* n) {
    if (mnl_attr_get_type(n) == DCB_ATTR_IEEE_PFC &&
        mnl_attr_get_payload_len(n) >= sizeof(ieee_pfc)) {
      ieee_pfc pfc{};
      std::memcpy(&pfc, mnl_attr_get_payload(n), sizeof pfc);
      d.pfc_present = true;
      d.pfc_cap = pfc.pfc_cap;
      d.pfc_enabled = pfc.pfc_en;
      for (size_t i = 0; i < 8; ++i) {
        d.pfc_requests[i] = pfc.requests[i];
        d.pfc_indications[i] = pfc.indications[i];
      }
    } else if (mnl_attr_get_type(n) == DCB_ATTR_IEEE_APP_TABLE) {
      for_each_nested(n, [&](const nlattr* app) {
        if (mnl_attr_get_type(app) != DCB_ATTR_IEEE_APP ||
            mnl_attr_get_payload_len(app) < sizeof(dcb_app)) {
          return;
        }
        dcb_app entry{};
        std::memcpy(&entry, mnl_attr_get_payload(app), sizeof entry);
        if (entry.selector == IEEE_8021QAZ_APP_SEL_DSCP) {
          ++d.dscp_app_entries;
          d.dscp_priority[entry.protocol] = entry.priority;
        }
      });
    }
  });
  return d;
}

Result<DcbState> read_dcb(const std::string& netdev) {
  using namespace std::chrono_literals;
  auto sock = NetlinkSocket::open(NETLINK_ROUTE, 2s);
  if (!sock) return sock.error();
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_GETDCB;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  auto* dcb = static_cast<dcbmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(dcbmsg)));
  dcb->dcb_family = AF_UNSPEC;
  dcb->cmd = DCB_CMD_IEEE_GET;
  mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, netdev.c_str());
  std::optional<Result<DcbState>> got;
  auto st = sock->request(
      nlh,
      [&](const nlmsghdr* reply) {
        got = parse_dcb_reply(reply);
        return MNL_CB_STOP;  // one reply, no ack asked for
      },
      "DCB_CMD_IEEE_GET " + netdev);
  if (!st) return st.error();
  if (!got) return plain_error("DCB_CMD_IEEE_GET", netdev + ": no reply");
  return *got;
}

nlohmann::json dscp_map_json(const std::map<int, int>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [dscp, prio] : m) j[std::to_string(dscp)] = prio;
  return j;
}

nlohmann::json to_json(const DcbState& d) {
  return {{"pfc_present", d.pfc_present},
          {"pfc_cap", d.pfc_cap},
          {"pfc_enabled", d.pfc_enabled},
          {"pfc_requests", d.pfc_requests},
          {"pfc_indications", d.pfc_indications},
          {"dscp_app_entries", d.dscp_app_entries},
          {"dscp_to_priority", dscp_map_json(d.dscp_priority)}};
}

DcbState dcb_from_json(const nlohmann::json& j) {
  DcbState d;
  d.pfc_present = j.value("pfc_present", false);
  d.pfc_cap = j.value("pfc_cap", 0);
  d.pfc_enabled = j.value("pfc_enabled", uint8_t{0});
  if (j.contains("pfc_requests")) d.pfc_requests = j["pfc_requests"].get<std::array<uint64_t, 8>>();
  if (j.contains("pfc_indications")) {
    d.pfc_indications = j["pfc_indications"].get<std::array<uint64_t, 8>>();
  }
  d.dscp_app_entries = j.value("dscp_app_entries", 0);
  // Captures made before the map was recorded have only the count.
  const auto map = j.value("dscp_to_priority", nlohmann::json::object());
  for (const auto& [dscp, prio] : map.items()) {
    d.dscp_priority[std::stoi(dscp)] = prio.get<int>();
  }
  return d;
}

}  // namespace rdmacheck::doctor
