#include "lab/plan.h"

#include <gtest/gtest.h>

#include "lab/ssh.h"

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
  EXPECT_NE(h.find("198.18.0.3\th3 h3-1\n"), std::string::npos);
}

TEST(Plan, EachNicHasItsWireSubnetNameAndDevice) {
  LabOptions o;
  o.nics = 3;
  auto p = make_plan(o);
  ASSERT_TRUE(p.ok()) << p.error().message();
  const GuestPlan& h2 = (*p)[1];
  EXPECT_EQ(h2.address, "198.18.0.2");  // the host name stays on the first wire
  ASSERT_EQ(h2.nics.size(), 3u);
  for (int k = 1; k <= 3; ++k) {
    const GuestNic& n = h2.nics[k - 1];
    EXPECT_EQ(n.wire, k);
    EXPECT_EQ(n.netdev, "eth" + std::to_string(k - 1));
    EXPECT_EQ(n.device, "rxe" + std::to_string(k - 1));
    EXPECT_EQ(n.address, "198.18." + std::to_string(k - 1) + ".2");
    EXPECT_EQ(n.name, "h2-" + std::to_string(k));
  }
  // Wire 1 keeps the single-NIC lab's MACs; every MAC is unique.
  EXPECT_EQ(h2.nics[0].mac, "52:54:00:12:34:02");
  EXPECT_EQ(h2.nics[1].mac, "52:54:00:12:35:02");
  EXPECT_NE((*p)[0].nics[1].mac, h2.nics[1].mac);
}

TEST(Plan, ReversedDeviceOrderPutsRxe0OnTheLastNic) {
  LabOptions o;
  o.nics = 2;
  o.device_order = DeviceOrder::kReversed;
  auto p = make_plan(o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[0].nics[0].netdev, "eth0");
  EXPECT_EQ((*p)[0].nics[0].device, "rxe1");
  EXPECT_EQ((*p)[0].nics[1].netdev, "eth1");
  EXPECT_EQ((*p)[0].nics[1].device, "rxe0");
  const std::string s = guest_script((*p)[0], *p);
  const auto rxe0 = s.find("rdma link add rxe0 type rxe netdev eth1");
  const auto rxe1 = s.find("rdma link add rxe1 type rxe netdev eth0");
  ASSERT_NE(rxe0, std::string::npos) << s;
  ASSERT_NE(rxe1, std::string::npos) << s;
  EXPECT_LT(rxe0, rxe1) << "devices are created in the order of their names, as probed";
  EXPECT_EQ(parse_enum<DeviceOrder>("reversed"), DeviceOrder::kReversed);
  EXPECT_EQ(parse_enum<DeviceOrder>("nics"), DeviceOrder::kNics);
}

TEST(Plan, GuestScriptBringsUpEveryNicAfterCheckingItsMac) {
  LabOptions o;
  o.nics = 2;
  auto p = make_plan(o);
  const std::string s = guest_script((*p)[1], *p);
  const auto pos = [&](const std::string& needle) { return s.find(needle); };
  ASSERT_NE(pos("/sys/class/net/eth1/address"), std::string::npos) << s;
  EXPECT_NE(pos("= 52:54:00:12:35:02 ]"), std::string::npos) << s;
  EXPECT_LT(pos("ip addr add 198.18.0.2/24 dev eth0"), pos("ip addr add 198.18.1.2/24 dev eth1"));
  EXPECT_LT(pos("ip addr add 198.18.1.2/24 dev eth1"), pos("rdma link add rxe0"));
  EXPECT_LT(pos("rdma link add rxe0 type rxe netdev eth0"),
            pos("rdma link add rxe1 type rxe netdev eth1"));
  EXPECT_LT(pos("/sys/class/infiniband/rxe1/ports/1/state"), pos("step setup"));
  // The wire counters come back for every NIC.
  EXPECT_NE(pos("for n in eth0 eth1; do"), std::string::npos) << s;
  EXPECT_NE(pos("touch $D/wire.done"), std::string::npos);
}

TEST(Plan, HostsFileNamesEveryAddress) {
  LabOptions o;
  o.nics = 2;
  EXPECT_EQ(hosts_file(*make_plan(o)),
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "198.18.0.1\th1 h1-1\n198.18.1.1\th1-2\n"
            "198.18.0.2\th2 h2-1\n198.18.1.2\th2-2\n");
}

// The hub forwards only between ports of one wire: NIC k of every host.
TEST(Plan, WirePortsGroupEachWiresNics) {
  LabOptions o;
  o.hosts = 3;
  o.nics = 2;
  const auto ports = wire_ports(*make_plan(o));
  ASSERT_EQ(ports.size(), 6u);
  const std::vector<std::pair<std::string, int>> want = {{"h1", 1}, {"h2", 1}, {"h3", 1},
                                                         {"h1", 2}, {"h2", 2}, {"h3", 2}};
  for (size_t i = 0; i < ports.size(); ++i) {
    EXPECT_EQ(ports[i].host, want[i].first);
    EXPECT_EQ(ports[i].nic.wire, want[i].second);
  }
  EXPECT_EQ(ports[4].nic.netdev, "eth1");
  EXPECT_EQ(ports[4].hub_socket, "hub-h2-2.sock");
  EXPECT_EQ(ports[4].guest_socket, "h2-2.sock");
  EXPECT_EQ(ports[1].guest_socket, "h2-1.sock");
}

TEST(Plan, FaultsCanTargetOneNic) {
  LabOptions o;
  o.nics = 2;
  o.faults = {"link-down@h2-2", "loss:3@h1-2", "firewall@h1-2", "mtu-mismatch@h2"};
  auto p = make_plan(o);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ((*p)[0].setup,
            (std::vector<std::string>{"tc qdisc add dev eth1 root netem loss 3%",
                                      "iptables -I INPUT -i eth1 -p udp --dport 4791 -j DROP"}));
  EXPECT_EQ((*p)[1].setup,
            (std::vector<std::string>{"ip link set eth1 down", "ip link set eth0 mtu 9000"}));
  o.faults = {"link-down"};  // a host alone: its first NIC
  EXPECT_EQ(make_plan(o)->front().setup, std::vector<std::string>{"ip link set eth0 down"});
}

TEST(Plan, BadNicsAndNicTargetsAreRefused) {
  LabOptions o;
  o.nics = 2;
  for (const std::string f : {"link-down@h2-3", "link-down@h2-0", "link-down@h3-1", "loss:1@h2-",
                              "powersave@h1-1", "no-server@h1-2"}) {
    o.faults = {f};
    EXPECT_FALSE(make_plan(o).ok()) << f;
  }
  o.faults = {"link-down@h2-3"};
  EXPECT_NE(make_plan(o).error().message().find("NICs 1..2"), std::string::npos);
  o.faults = {};
  o.nics = 0;
  EXPECT_FALSE(make_plan(o).ok());
  o.nics = kMaxNics + 1;
  EXPECT_FALSE(make_plan(o).ok());
}

// The host faults are one table (lab/host_fault.cc): the refusal lists every
// name as the usage spells it, a whole-host fault refuses a NIC, and each
// fault is its own guest command.
TEST(Plan, HostFaultsComeFromOneTable) {
  bool no_server = false;
  auto bad = fault_commands("meteor", 2, 1, &no_server);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(
                "choose firewall, mtu-mismatch, loss:PERCENT, link-down, powersave or no-server,"),
            std::string::npos)
      << bad.error().message();
  auto nic = fault_commands("powersave@h1-2", 2, 2, &no_server);
  ASSERT_FALSE(nic.ok());
  EXPECT_NE(nic.error().message().find("powersave concerns the whole host"), std::string::npos);
  auto loss = fault_commands("loss:2.5@h2-2", 2, 2, &no_server);
  ASSERT_TRUE(loss.ok());
  ASSERT_EQ(loss->size(), 1U);
  EXPECT_EQ((*loss)[0].host, "h2");
  EXPECT_EQ((*loss)[0].cmd, "tc qdisc add dev eth1 root netem loss 2.5%");
  auto fw = fault_commands("firewall", 2, 1, &no_server);
  ASSERT_TRUE(fw.ok());
  EXPECT_EQ((*fw)[0].cmd, "iptables -I INPUT -p udp --dport 4791 -j DROP");
  EXPECT_FALSE(no_server);
  auto none = fault_commands("no-server", 2, 1, &no_server);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(no_server);
}

// --mesh: every guest starts sshd before it says ready, h1 serves nothing of
// its own and runs the mesh over all guests with Open MPI over TCP.
TEST(Plan, MeshRunsMpirunFromH1WithSshOnEveryGuest) {
  LabOptions o;
  o.hosts = 4;
  o.mesh = true;
  auto plan = make_plan(o);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE((*plan)[0].serve);
  ASSERT_EQ((*plan)[0].run.size(), 1u);
  EXPECT_EQ((*plan)[0].run[0],
            "mpirun --allow-run-as-root -np 4 --hostfile /run/lab/hostfile --map-by ppr:1:node "
            "--mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca "
            "oob_tcp_if_include eth0 /run/lab/bin/rdmacheck mesh");
  for (const auto& g : *plan) {
    EXPECT_TRUE(g.ssh);
    const auto script = guest_script(g, *plan);
    const auto sshd = script.find("/usr/sbin/sshd -f $LAB/ssh/sshd_config");
    ASSERT_NE(sshd, std::string::npos);
    EXPECT_LT(sshd, script.find("touch $D/ready"));
  }
  EXPECT_EQ(mpi_hostfile(*plan), "h1 slots=1\nh2 slots=1\nh3 slots=1\nh4 slots=1\n");
  EXPECT_EQ(known_hosts(*plan, "ssh-ed25519 AAAAC3Nz x"),
            "h1,h1-1,198.18.0.1,h2,h2-1,198.18.0.2,h3,h3-1,198.18.0.3,h4,h4-1,198.18.0.4 "
            "ssh-ed25519 AAAAC3Nz x\n");
  // Not asked for: no sshd.
  o.mesh = false;
  plan = make_plan(o);
  EXPECT_EQ(guest_script((*plan)[0], *plan).find("sshd"), std::string::npos);
}

// Switch faults are the hub's: no guest runs a command for them; timed
// faults must be switch faults, and a bad one stops the plan.
TEST(Plan, SwitchFaultsGoToTheHubAndOnlyTheyCanBeTimed) {
  LabOptions o;
  o.hosts = 3;
  o.faults = {"switch-loss:5@h3", "firewall"};
  o.fault_at = {"10:switch-flap:1/5@h2:out"};
  o.fault_until = {"4.5:switch-delay:20@h1"};
  auto plan = make_plan(o);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_EQ((*plan)[0].setup.size(), 1u) << "the firewall only";
  EXPECT_TRUE((*plan)[2].setup.empty());
  auto sw = switch_faults(o);
  ASSERT_TRUE(sw.ok());
  ASSERT_EQ(sw->size(), 3u);
  EXPECT_EQ((*sw)[0].host, "h3");
  EXPECT_FALSE((*sw)[0].at_s);
  EXPECT_EQ((*sw)[1].at_s, 10);
  EXPECT_EQ((*sw)[1].direction, PortDirection::kOut);
  EXPECT_EQ((*sw)[1].spec, "--fault-at 10:switch-flap:1/5@h2:out");
  EXPECT_EQ((*sw)[2].until_s, 4.5);

  // A FAULT that --fault-at starts and --fault-until ends is one window.
  o.fault_at = {"60:switch-loss:5@h3"};
  o.fault_until = {"120:switch-loss:5@h3", "30:switch-loss:5@h2"};
  sw = switch_faults(o);
  ASSERT_TRUE(sw.ok()) << sw.error().message();
  ASSERT_EQ(sw->size(), 3u);
  EXPECT_EQ((*sw)[1].at_s, 60);
  EXPECT_EQ((*sw)[1].until_s, 120);
  EXPECT_EQ((*sw)[1].spec, "--fault-at 60:switch-loss:5@h3 --fault-until 120:switch-loss:5@h3");
  EXPECT_TRUE((*sw)[1].active_at(90));
  EXPECT_FALSE((*sw)[1].active_at(121));
  EXPECT_FALSE((*sw)[2].at_s);  // another port's: from the start until 30 s
  EXPECT_EQ((*sw)[2].until_s, 30);
  o.fault_until = {"50:switch-loss:5@h3"};
  auto backwards = switch_faults(o);
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.error().message().find("ends before"), std::string::npos);
  o.fault_until = {};

  o.fault_at = {"10:firewall"};
  auto refused = make_plan(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("only a switch fault (switch-...) can be timed"),
            std::string::npos)
      << refused.error().message();
  o.fault_at.clear();
  o.faults = {"switch-loss:5@h4"};
  refused = make_plan(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("unknown host 'h4'"), std::string::npos);
  o.faults = {"switchloss:5@h2"};
  refused = make_plan(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("or a fault in the switch"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::lab
