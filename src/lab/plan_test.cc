#include "lab/plan.h"

#include <gtest/gtest.h>

namespace rdmacheck::lab {
namespace {

TEST(Plan, DefaultIsServeOnH1AndCheckFromTheLastHost) {
  LabOptions o;
  auto p = make_plan(o);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_TRUE((*p)[0].serve);
  EXPECT_TRUE((*p)[0].run.empty());
  EXPECT_EQ((*p)[1].address, "198.18.0.2");
  ASSERT_EQ((*p)[1].run.size(), 1u);
  EXPECT_EQ((*p)[1].run[0], "rdmacheck check h1");
}

TEST(Plan, JsonPassesThrough) {
  LabOptions o;
  o.json = true;
  EXPECT_EQ(make_plan(o)->back().run[0], "rdmacheck check h1 --json");
}

TEST(Plan, SetupRunAndFaults) {
  LabOptions o;
  o.hosts = 3;
  o.setup = {"h3:echo hi"};
  o.run = {"h2:rdmacheck ping h1 --ud"};
  o.faults = {"firewall", "loss:1.5@h2"};
  auto p = make_plan(o);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ((*p)[0].setup,
            std::vector<std::string>{"iptables -I INPUT -p udp --dport 4791 -j DROP"});
  EXPECT_EQ((*p)[1].setup, std::vector<std::string>{"tc qdisc add dev eth0 root netem loss 1.5%"});
  EXPECT_EQ((*p)[2].setup, std::vector<std::string>{"echo hi"});
  EXPECT_TRUE((*p)[2].run.empty());  // --run replaces the default test
  EXPECT_EQ((*p)[1].run.size(), 1u);
}

TEST(Plan, NoServerFault) {
  LabOptions o;
  o.faults = {"no-server"};
  EXPECT_FALSE(make_plan(o)->front().serve);
}

TEST(Plan, BadInputIsRefusedWithAReason) {
  LabOptions o;
  o.run = {"h5:true"};
  auto p = make_plan(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("unknown host 'h5'"), std::string::npos);
  o.run = {"no-colon"};
  EXPECT_FALSE(make_plan(o).ok());
  o.run = {};
  o.faults = {"loss:abc"};
  EXPECT_FALSE(make_plan(o).ok());
  o.faults = {"loss:0"};
  EXPECT_FALSE(make_plan(o).ok());
  o.faults = {"meteor"};
  EXPECT_FALSE(make_plan(o).ok());
  o.faults = {"powersave:3"};  // takes no argument
  EXPECT_FALSE(make_plan(o).ok());
  o.faults = {};
  o.hosts = 0;
  EXPECT_FALSE(make_plan(o).ok());
  o.hosts = kMaxHosts + 1;
  EXPECT_FALSE(make_plan(o).ok());
}

TEST(Plan, GuestScriptOrdersTheSteps) {
  LabOptions o;
  o.setup = {"h1:ip link set eth0 mtu 9000"};
  auto p = make_plan(o);
  const std::string s1 = guest_script((*p)[0], *p);
  const auto pos = [&](const std::string& needle) { return s1.find(needle); };
  ASSERT_NE(pos("rdma link add rxe0 type rxe netdev eth0"), std::string::npos);
  ASSERT_NE(pos("run_setup 1"), std::string::npos);
  ASSERT_NE(pos("rdmacheck serve"), std::string::npos);
  EXPECT_LT(pos("ip addr add 198.18.0.1/24 dev eth0"), pos("rdma link add"));
  EXPECT_LT(pos("rdma link add"), pos("run_setup 1"));
  EXPECT_LT(pos("run_setup 1"), pos("touch $D/ready"));
  EXPECT_LT(pos("wait_all ready"), pos("rdmacheck serve"));
  EXPECT_EQ(pos("echo $worst > $D/exit"), std::string::npos);  // h1 only serves
  const std::string s2 = guest_script((*p)[1], *p);
  EXPECT_NE(s2.find("run_run 1"), std::string::npos);
  EXPECT_NE(s2.find("echo $worst > $D/exit"), std::string::npos);
  EXPECT_EQ(s2.find("rdmacheck serve"), std::string::npos);
}

// The lab proves the key exchange on every boot: h1 requires the lab's key,
// every guest's clients find it in RDMACHECK_PSK_FILE.
TEST(Plan, EveryGuestUsesTheLabsKeyAndServeTakesExtraArgs) {
  LabOptions o;
  o.serve_args = "--allow 198.18.0.2";
  auto p = make_plan(o);
  const std::string s1 = guest_script((*p)[0], *p);
  EXPECT_NE(s1.find("rdmacheck serve --psk-file $LAB/lab.psk --allow 198.18.0.2 >"),
            std::string::npos)
      << s1;
  const std::string s2 = guest_script((*p)[1], *p);
  EXPECT_NE(s2.find("export RDMACHECK_PSK_FILE=$LAB/lab.psk"), std::string::npos);
}

TEST(Plan, HostsFile) {
  LabOptions o;
  o.hosts = 3;
  const auto h = hosts_file(*make_plan(o));
  EXPECT_NE(h.find("198.18.0.3\th3\n"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::lab
