// One netlink request and its replies, over libmnl, bounded in time: the
// socket has a receive timeout, so a kernel that never answers cannot hang us.
#pragma once

#include <linux/netlink.h>

#include <chrono>
#include <functional>
#include <memory>

#include "base/result.h"

struct mnl_socket;
struct nlattr;

namespace rdmacheck {

class NetlinkSocket {
 public:
  // bus: NETLINK_RDMA, NETLINK_ROUTE. Fails with EPROTONOSUPPORT where the
  // kernel lacks that netlink family (NETLINK_RDMA without ib_core).
  static Result<NetlinkSocket> open(int bus, std::chrono::milliseconds timeout);

  // Sends nlh (its sequence number and port are filled in) and hands every
  // reply message to on_msg until the kernel says done. on_msg returns
  // MNL_CB_OK to go on, MNL_CB_STOP to end early, MNL_CB_ERROR to fail.
  // A kernel error reply becomes the Error, with its errno.
  Status request(nlmsghdr* nlh, const std::function<int(const nlmsghdr*)>& on_msg,
                 const std::string& what);

 private:
  struct Closer {
    void operator()(mnl_socket* s) const;
  };
  explicit NetlinkSocket(mnl_socket* s) : sock_(s) {}
  std::unique_ptr<mnl_socket, Closer> sock_;
  unsigned seq_ = 0;
};

// libmnl's attribute loops are C macros that do not compile as C++; these do
// the same walk. offset: the size of the family header after nlmsghdr.
void for_each_attr(const nlmsghdr* nlh, size_t offset, const std::function<void(const nlattr*)>& f);
void for_each_nested(const nlattr* nest, const std::function<void(const nlattr*)>& f);

}  // namespace rdmacheck
