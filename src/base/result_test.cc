#include "base/result.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

TEST(Result, ErrorMessagesCarryCallErrnoAndContext) {
  EXPECT_EQ(code_error("ibv_modify_qp(RTR)", EINVAL, "rxe0 port 1 qpn 0x11").message(),
            "ibv_modify_qp(RTR): Invalid argument [rxe0 port 1 qpn 0x11]");
  EXPECT_EQ(code_error("ibv_poll_cq", -EAGAIN).message(),
            "ibv_poll_cq: Resource temporarily unavailable");
  EXPECT_EQ(plain_error("handshake", "qp.psn: must be an integer").message(),
            "handshake: qp.psn: must be an integer");
  errno = ENOMEM;
  EXPECT_EQ(errno_error("ibv_reg_mr", "rxe0").errnum, ENOMEM);
}

TEST(Result, HoldsValueOrError) {
  Result<int> a = 3;
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 3);
  Result<int> b = plain_error("x", "y");
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.error().call, "x");
}

}  // namespace
}  // namespace rdmacheck
