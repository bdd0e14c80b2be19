#include "conn/diagnose.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace rdmacheck::conn {
namespace {

proto::HostFacts facts(const std::string& gid, int netdev_mtu,
                       const std::string& type = "RoCE v2") {
  proto::HostFacts f;
  f.gid = gid;
  f.gid_type = type;
  f.netdev_mtu = netdev_mtu;
  f.active_mtu = 1024;
  return f;
}

ConnObservation lost(const std::string& peer_firewall) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kTraffic;
  o.wc_status = IBV_WC_RETRY_EXC_ERR;
  o.local = facts("0000:0000:0000:0000:0000:ffff:c612:0002", 1500);
  o.peer = facts("0000:0000:0000:0000:0000:ffff:c612:0001", 1500);
  o.peer_firewall = peer_firewall;
  return o;
}

std::vector<std::string> ids(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(f.id);
  return out;
}

TEST(Diagnose, HealthyHasNoFindings) { EXPECT_TRUE(diagnose(ConnObservation{}).empty()); }

TEST(Diagnose, RefusedMeansNoServer) {
  ConnObservation o;
  o.host = "h1";
  o.tcp_port = 4792;
  o.failed = Stage::kTcpConnect;
  o.errnum = ECONNREFUSED;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"server-not-listening"});
  EXPECT_EQ(f[0].severity, Severity::kFail);
}

TEST(Diagnose, TimeoutMeansUnreachable) {
  ConnObservation o;
  o.failed = Stage::kTcpConnect;
  o.errnum = ETIMEDOUT;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"peer-unreachable"});
  o.errnum = EHOSTUNREACH;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"peer-unreachable"});
}

TEST(Diagnose, FirewallOnThePeerComesFirstWithTheRule) {
  const auto f = diagnose(lost("-A INPUT -p udp -m udp --dport 4791 -j DROP"));
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, "firewall-blocks-roce");
  EXPECT_NE(f[0].evidence[0].find("--dport 4791 -j DROP"), std::string::npos);
}

TEST(Diagnose, LocalFirewallCountsToo) {
  auto o = lost("");
  o.local_firewall = {"iptables -A OUTPUT -p udp -j DROP"};
  EXPECT_EQ(diagnose(o)[0].id, "firewall-blocks-roce");
}

TEST(Diagnose, UnexplainedLossIsNamedAsSuch) {
  EXPECT_EQ(ids(diagnose(lost(""))), std::vector<std::string>{"roce-packets-lost"});
}

TEST(Diagnose, GidTypeMismatch) {
  auto o = lost("");
  o.peer->gid_type = "RoCE v1";
  EXPECT_EQ(diagnose(o)[0].id, "gid-type-mismatch");
}

TEST(Diagnose, LadderFindsTheBlackHole) {
  auto o = lost("");
  o.local->netdev_mtu = 9000;
  o.ladder = {{64, true, 10, ""}, {1024, true, 10, ""}, {2048, false, 0, "retry exceeded"}};
  const auto f = diagnose(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, "mtu-black-hole");
  EXPECT_NE(f[0].summary.find("up to 1024 bytes pass, 2048 bytes fail"), std::string::npos);
  EXPECT_NE(f[0].evidence[0].find("9000"), std::string::npos);
}

TEST(Diagnose, RnrAndAccessErrors) {
  ConnObservation o;
  o.failed = Stage::kTraffic;
  o.wc_status = IBV_WC_RNR_RETRY_EXC_ERR;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"receiver-not-ready"});
  o.wc_status = IBV_WC_REM_ACCESS_ERR;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"remote-access-error"});
}

TEST(Diagnose, MemlockOnRegistration) {
  ConnObservation o;
  o.failed = Stage::kLocalSetup;
  o.errnum = ENOMEM;
  o.failed_call = "ibv_reg_mr";
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"memlock-too-low"});
  o.failed_call = "ibv_create_cq";  // out of memory elsewhere is not the memlock limit
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"local-setup-failed"});
}

}  // namespace
}  // namespace rdmacheck::conn
