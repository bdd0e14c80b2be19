// The client's failure path needs no RDMA device: the TCP connect comes first.
#include "perf/client.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

TEST(PerfClient, NoServerIsDiagnosedLikePing) {
  PerfOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = 1;  // nothing listens on tcpmux
  const std::atomic<bool> stop{false};
  const PerfReport r = run_perf(o, stop);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failed, conn::Stage::kTcpConnect);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, FindingId::kServerNotListening);
  EXPECT_EQ(exit_status(r), 2);
}

TEST(PerfClient, InvalidSpecFailsBeforeConnecting) {
  PerfOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = 1;
  o.spec.cq_mod = 3;
  const std::atomic<bool> stop{false};
  const PerfReport r = run_perf(o, stop);
  EXPECT_EQ(r.failed, conn::Stage::kOptions);
  EXPECT_NE(r.error.find("CQ moderation"), std::string::npos) << r.error;
  EXPECT_TRUE(r.findings.empty());
}

}  // namespace
}  // namespace rdmacheck::perf
