#include "qps/qp_list.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <array>

#include "base/netlink.h"

namespace rdmacheck::qps {
namespace {

using AttrTable = std::array<const nlattr*, RDMA_NLDEV_ATTR_MAX>;

int keep_attr(const nlattr* a, void* data) {
  const auto type = mnl_attr_get_type(a);
  if (type < RDMA_NLDEV_ATTR_MAX) (*static_cast<AttrTable*>(data))[type] = a;
  return MNL_CB_OK;
}

std::optional<uint32_t> u32(const AttrTable& tb, int attr) {
  if (tb[attr] == nullptr || mnl_attr_get_payload_len(tb[attr]) < 4) return std::nullopt;
  return mnl_attr_get_u32(tb[attr]);
}

std::optional<uint8_t> u8(const AttrTable& tb, int attr) {
  if (tb[attr] == nullptr || mnl_attr_get_payload_len(tb[attr]) < 1) return std::nullopt;
  return mnl_attr_get_u8(tb[attr]);
}

std::string str(const AttrTable& tb, int attr) {
  if (tb[attr] == nullptr || mnl_attr_get_payload_len(tb[attr]) == 0) return {};
  const auto* p = static_cast<const char*>(mnl_attr_get_payload(tb[attr]));
  return std::string(p, strnlen(p, mnl_attr_get_payload_len(tb[attr])));
}

nlmsghdr* put_request(std::vector<char>& buf, int cmd) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  return nlh;
}

}  // namespace

const char* qp_type_name(uint8_t t) {
  static constexpr const char* kNames[] = {
      "SMI",           "GSI",     "RC",         "UC",      "UD",     "RAW_IPV6",
      "RAW_ETHERTYPE", "UNKNOWN", "RAW_PACKET", "XRC_INI", "XRC_TGT"};
  if (t == 0xff) return "DRIVER";
  return t < std::size(kNames) ? kNames[t] : "UNKNOWN";
}

QpState qp_state_of(uint8_t s) {
  // ib_qp_state's numbers are the enum's order, RESET (0) to ERR (6).
  return s <= static_cast<uint8_t>(QpState::kErr) ? static_cast<QpState>(s) : QpState::kUnknown;
}

Result<std::pair<uint32_t, std::string>> parse_device_message(const nlmsghdr* nlh) {
  AttrTable tb{};
  for_each_attr(nlh, 0, [&](const nlattr* a) { keep_attr(a, &tb); });
  const auto idx = u32(tb, RDMA_NLDEV_ATTR_DEV_INDEX);
  const std::string name = str(tb, RDMA_NLDEV_ATTR_DEV_NAME);
  if (!idx || name.empty()) return plain_error("RDMA_NLDEV_CMD_GET", "reply without index/name");
  return std::pair<uint32_t, std::string>{*idx, name};
}

Result<std::vector<QpInfo>> parse_qp_message(const nlmsghdr* nlh) {
  AttrTable tb{};
  for_each_attr(nlh, 0, [&](const nlattr* a) { keep_attr(a, &tb); });
  const auto idx = u32(tb, RDMA_NLDEV_ATTR_DEV_INDEX);
  const std::string name = str(tb, RDMA_NLDEV_ATTR_DEV_NAME);
  if (!idx || name.empty() || tb[RDMA_NLDEV_ATTR_RES_QP] == nullptr) {
    return plain_error("RDMA_NLDEV_CMD_RES_QP_GET", "reply without device or QP table");
  }
  std::vector<QpInfo> out;
  std::vector<AttrTable> lines;
  for_each_nested(tb[RDMA_NLDEV_ATTR_RES_QP], [&](const nlattr* entry) {
    AttrTable line{};
    for_each_nested(entry, [&](const nlattr* a) { keep_attr(a, &line); });
    lines.push_back(line);
  });
  for (const auto& line : lines) {
    QpInfo q;
    q.device = name;
    q.dev_index = *idx;
    const auto lqpn = u32(line, RDMA_NLDEV_ATTR_RES_LQPN);
    if (!lqpn) return plain_error("RDMA_NLDEV_CMD_RES_QP_GET", "QP entry without lqpn");
    q.lqpn = *lqpn;
    q.port = u32(line, RDMA_NLDEV_ATTR_PORT_INDEX);
    q.rqpn = u32(line, RDMA_NLDEV_ATTR_RES_RQPN);
    q.type = qp_type_name(u8(line, RDMA_NLDEV_ATTR_RES_TYPE).value_or(7));
    q.state = qp_state_of(u8(line, RDMA_NLDEV_ATTR_RES_STATE).value_or(0xfe));
    q.pid = u32(line, RDMA_NLDEV_ATTR_RES_PID);
    q.kernel = !q.pid.has_value();
    q.comm = str(line, RDMA_NLDEV_ATTR_RES_KERN_NAME);
    q.sq_psn = u32(line, RDMA_NLDEV_ATTR_RES_SQ_PSN);
    q.rq_psn = u32(line, RDMA_NLDEV_ATTR_RES_RQ_PSN);
    q.pdn = u32(line, RDMA_NLDEV_ATTR_RES_PDN);
    out.push_back(std::move(q));
  }
  return out;
}

Result<std::vector<QpInfo>> read_qps(const FsRoot& fs) {
  using namespace std::chrono_literals;
  auto sock = NetlinkSocket::open(NETLINK_RDMA, 3s);
  if (!sock) return sock.error();
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  std::vector<std::pair<uint32_t, std::string>> devices;
  std::optional<Error> bad;
  auto st = sock->request(
      put_request(buf, RDMA_NLDEV_CMD_GET),
      [&](const nlmsghdr* m) {
        auto d = parse_device_message(m);
        if (!d) {
          bad = d.error();
          return MNL_CB_ERROR;
        }
        devices.push_back(*d);
        return MNL_CB_OK;
      },
      "RDMA_NLDEV_CMD_GET");
  if (bad) return *bad;
  if (!st) return st.error();
  std::vector<QpInfo> qps;
  for (const auto& [index, name] : devices) {
    // The kernel dumps resources one device at a time (nldev.c wants DEV_INDEX).
    nlmsghdr* nlh = put_request(buf, RDMA_NLDEV_CMD_RES_QP_GET);
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
    st = sock->request(
        nlh,
        [&](const nlmsghdr* m) {
          auto got = parse_qp_message(m);
          if (!got) {
            bad = got.error();
            return MNL_CB_ERROR;
          }
          qps.insert(qps.end(), got->begin(), got->end());
          return MNL_CB_OK;
        },
        "RDMA_NLDEV_CMD_RES_QP_GET " + name);
    if (bad) return *bad;
    if (!st) return st.error();
  }
  for (auto& q : qps) {
    if (q.pid) q.comm = fs.read_line("/proc/" + std::to_string(*q.pid) + "/comm").value_or("");
  }
  return qps;
}

nlohmann::json to_json(const QpInfo& q) {
  const auto opt = [](const std::optional<uint32_t>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  return {{"device", q.device},
          {"dev_index", q.dev_index},
          {"port", opt(q.port)},
          {"lqpn", q.lqpn},
          {"rqpn", opt(q.rqpn)},
          {"type", q.type},
          {"state", std::string(name_of(q.state))},
          {"pid", opt(q.pid)},
          {"comm", q.comm},
          {"kernel", q.kernel},
          {"sq_psn", opt(q.sq_psn)},
          {"rq_psn", opt(q.rq_psn)},
          {"pdn", opt(q.pdn)}};
}

QpInfo qp_from_json(const nlohmann::json& j) {
  const auto opt = [&](const char* k) -> std::optional<uint32_t> {
    if (!j.contains(k) || !j[k].is_number()) return std::nullopt;
    return j[k].get<uint32_t>();
  };
  QpInfo q;
  q.device = j.value("device", "");
  q.dev_index = j.value("dev_index", 0u);
  q.port = opt("port");
  q.lqpn = j.value("lqpn", 0u);
  q.rqpn = opt("rqpn");
  q.type = j.value("type", "");
  q.state = parse_enum<QpState>(j.value("state", "")).value_or(QpState::kUnknown);
  q.pid = opt("pid");
  q.comm = j.value("comm", "");
  q.kernel = j.value("kernel", false);
  q.sq_psn = opt("sq_psn");
  q.rq_psn = opt("rq_psn");
  q.pdn = opt("pdn");
  return q;
}

}  // namespace rdmacheck::qps
