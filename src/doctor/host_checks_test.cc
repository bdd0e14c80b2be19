#include <gtest/gtest.h>

#include "doctor/memlock.h"
#include "doctor/test_fixture.h"
#include "host/numa.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

constexpr const char* kLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max stack size            8388608              unlimited            bytes     \n"
    "Max locked memory         8388608              unlimited            bytes     \n"
    "Max address space         unlimited            unlimited            bytes     \n";

TEST(Memlock, ParsesProcLimits) {
  const auto m = parse_memlock(kLimits);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->soft, 8388608u);
  EXPECT_FALSE(m->hard);
  EXPECT_FALSE(parse_memlock("Max stack size 1 1 bytes\n"));
  EXPECT_EQ(bytes_text(8388608), "8 MiB");
  EXPECT_EQ(bytes_text(65536), "64 KiB");
  EXPECT_EQ(bytes_text(std::nullopt), "unlimited");
  EXPECT_EQ(bytes_text(1000), "1000 bytes");
}

TEST(Memlock, CapIpcLockBit) {
  EXPECT_EQ(has_ipc_lock("Name:\tx\nCapEff:\t000001ffffffffff\n"), true);
  EXPECT_EQ(has_ipc_lock("CapEff:\t0000000000000000\n"), false);
  EXPECT_EQ(has_ipc_lock("CapEff:\t0000000000004000\n"), true);
  EXPECT_FALSE(has_ipc_lock("Name:\tx\n").has_value());
}

TEST(Memlock, LowLimitForAnUnprivilegedUser) {
  const auto rs = check_memlock(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"memlock-too-low"});
  EXPECT_EQ(rs[0].findings[0].severity, Severity::kWarn);
  EXPECT_EQ(rs[0].findings[0].evidence[0],
            "/proc/self/limits: Max locked memory soft 64 KiB hard 64 KiB");
  EXPECT_TRUE(ids(check_memlock(Fixture("mlx5-healthy").m())).empty());
  // Root in the development VM: 8 MiB, but CAP_IPC_LOCK lifts it.
  EXPECT_EQ(ids(check_memlock(Fixture("no-rdma-vm").m())),
            std::vector<std::string>{"memlock-low-but-privileged"});
}

TEST(Numa, CpulistsAndPlacement) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(parse_cpulist("").empty());
  EXPECT_EQ(parse_cpulist("x,2"), std::vector<int>{2});
  const auto p = rdma_device_numa(FsRoot(kFixtures + "/mlx4-degraded"), "mlx4_0", "enp129s0");
  EXPECT_EQ(p.node, 1);
  EXPECT_EQ(p.cpulist, "4-7");
  EXPECT_EQ(p.cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p.nodes_online, 2);
  // Soft-RoCE: only its netdev's device could say; virtio in a guest has no numa_node.
  const auto rxe = rdma_device_numa(FsRoot(kFixtures + "/rxe-lab-doctor-healthy"), "rxe0", "eth0");
  EXPECT_EQ(rxe.node, -1);
  EXPECT_EQ(rxe.source, "");
  EXPECT_TRUE(rxe.cpus.empty());
  EXPECT_TRUE(ids(check_numa(Fixture("mlx5-gen3x8").m())).empty());
}

TEST(Numa, StrictCpulistIsAllOrNothing) {
  EXPECT_EQ(parse_cpulist_strict("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist_strict("x,2"), std::nullopt);
  EXPECT_EQ(parse_cpulist_strict("0,,1"), std::nullopt);
  EXPECT_EQ(parse_cpulist_strict("3-1"), std::nullopt);
  EXPECT_EQ(parse_cpulist_strict(""), std::nullopt);
}

// The real capture of a lab guest with iptables -I INPUT -p udp --dport 4791 -j DROP.
TEST(Firewall, RuleDroppingRoceIsAFailureWithTheRule) {
  const auto rs = check_firewall(Fixture("rxe-lab-doctor-firewall").m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"firewall-blocks-roce"});
  const Finding& f = rs[0].findings[0];
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.layer, Layer::kConnection);
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_EQ(f.evidence[0], "iptables -A INPUT -p udp -m udp --dport 4791 -j DROP");
  EXPECT_TRUE(ids(check_firewall(Fixture("rxe-lab-doctor-healthy").m())).empty());
}

TEST(Firewall, UnreadableIsSaidNotGuessed) {
  const ScratchCopy s("mlx5-healthy", "firewall-unreadable");
  s.write("/capture/firewall.json", R"([
    {"command": "iptables -S", "started": true, "exit_status": 4, "out": ""},
    {"command": "ip6tables -S", "started": true, "exit_status": 4, "out": ""},
    {"command": "nft list ruleset", "started": false, "exit_status": -1, "out": ""}])");
  const auto rs = check_firewall(Fixture(s.name()).m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"firewall-unreadable"});
  EXPECT_EQ(rs[0].findings[0].severity, Severity::kInfo);
  EXPECT_NE(rs[0].findings[0].evidence[0].find("iptables -S failed"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::doctor
