#include "base/netlink.h"

#include <libmnl/libmnl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <ctime>
#include <vector>

namespace rdmacheck {
namespace {

int trampoline(const nlmsghdr* nlh, void* data) {
  return (*static_cast<const std::function<int(const nlmsghdr*)>*>(data))(nlh);
}

}  // namespace

void NetlinkSocket::Closer::operator()(mnl_socket* s) const { mnl_socket_close(s); }

Result<NetlinkSocket> NetlinkSocket::open(int bus, std::chrono::milliseconds timeout) {
  mnl_socket* s = mnl_socket_open2(bus, SOCK_CLOEXEC);
  if (s == nullptr) return errno_error("socket(AF_NETLINK)", "netlink bus " + std::to_string(bus));
  NetlinkSocket ns(s);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  if (setsockopt(mnl_socket_get_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    return errno_error("setsockopt(SO_RCVTIMEO)");
  }
  if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) != 0) return errno_error("mnl_socket_bind");
  return ns;
}

Status NetlinkSocket::request(nlmsghdr* nlh, const std::function<int(const nlmsghdr*)>& on_msg,
                              const std::string& what) {
  nlh->nlmsg_seq = ++seq_ + static_cast<unsigned>(::time(nullptr));
  const unsigned portid = mnl_socket_get_portid(sock_.get());
  if (mnl_socket_sendto(sock_.get(), nlh, nlh->nlmsg_len) < 0) {
    return errno_error("netlink send", what);
  }
  std::vector<char> buf(32768);  // MNL_SOCKET_DUMP_SIZE of newer libmnl
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(sock_.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return plain_error("netlink receive", what + ": no answer before the deadline");
      }
      return errno_error("netlink receive", what);
    }
    errno = 0;
    const int rc =
        mnl_cb_run(buf.data(), static_cast<size_t>(n), nlh->nlmsg_seq, portid, trampoline,
                   const_cast<std::function<int(const nlmsghdr*)>*>(&on_msg));
    if (rc == MNL_CB_STOP) return ok_status();
    if (rc < 0 && errno == 0) return plain_error("netlink", what + ": malformed reply");
    if (rc < 0) return errno_error("netlink", what);
  }
}

void for_each_attr(const nlmsghdr* nlh, size_t offset,
                   const std::function<void(const nlattr*)>& f) {
  const auto* a = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, offset));
  const auto* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
  while (mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char*>(a)))) {
    f(a);
    a = mnl_attr_next(a);
  }
}

void for_each_nested(const nlattr* nest, const std::function<void(const nlattr*)>& f) {
  const auto* a = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
  const auto* tail = reinterpret_cast<const char*>(nest) + mnl_attr_get_len(nest);
  while (mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char*>(a)))) {
    f(a);
    a = mnl_attr_next(a);
  }
}

}  // namespace rdmacheck
