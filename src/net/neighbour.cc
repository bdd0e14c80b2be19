#include "net/neighbour.h"

#include <fmt/core.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>

#include "base/netlink.h"

namespace rdmacheck {

std::optional<Neighbour> parse_neigh_message(const nlmsghdr* nlh) {
  if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(ndmsg))) {
    return std::nullopt;
  }
  const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  Neighbour n;
  n.ifindex = nd->ndm_ifindex;
  n.state = nd->ndm_state;
  bool has_dst = false;
  for_each_attr(nlh, sizeof(ndmsg), [&](const nlattr* a) {
    const auto len = mnl_attr_get_payload_len(a);
    const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
    switch (mnl_attr_get_type(a)) {
      case NDA_DST:
        if (nd->ndm_family == AF_INET && len == 4) {
          in_addr v4{};
          std::memcpy(&v4, p, 4);
          n.ip = mapped(v4);
          has_dst = true;
        } else if (nd->ndm_family == AF_INET6 && len == 16) {
          std::memcpy(n.ip.data(), p, 16);
          has_dst = true;
        }
        break;
      case NDA_LLADDR:
        n.lladdr.assign(p, p + len);
        break;
      default:
        break;
    }
  });
  if (!has_dst) return std::nullopt;
  // The address is valid in every state but none, incomplete and failed (ip-neighbour(8)).
  if ((n.state & (NUD_INCOMPLETE | NUD_FAILED)) != 0 || n.state == NUD_NONE) n.lladdr.clear();
  return n;
}

Result<std::optional<Neighbour>> neighbour_of(const Ip16& ip) {
  using namespace std::chrono_literals;
  auto sock = NetlinkSocket::open(NETLINK_ROUTE, 3s);
  if (!sock) return sock.error();
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_GETNEIGH;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = is_mapped(ip) ? AF_INET : AF_INET6;
  std::optional<Neighbour> found;
  auto st = sock->request(
      nlh,
      [&](const nlmsghdr* m) {
        auto n = parse_neigh_message(m);
        if (n && n->ip == ip && !n->lladdr.empty()) found = std::move(n);
        return MNL_CB_OK;
      },
      "RTM_GETNEIGH");
  if (!st) return st.error();
  return found;
}

std::optional<std::string> ipoib_gid(const std::vector<uint8_t>& lladdr) {
  if (lladdr.size() != 20) return std::nullopt;
  std::string out;
  for (size_t i = 4; i < 20; i += 2) {
    out += fmt::format("{}{:02x}{:02x}", out.empty() ? "" : ":", lladdr[i], lladdr[i + 1]);
  }
  return out;
}

}  // namespace rdmacheck
