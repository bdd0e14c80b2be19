// The device/port/GID choice over real sysfs trees (tests/fixtures: rxe-lab-h1
// captured in a lab guest, mlx5-healthy and mlx4-degraded built from the
// documented layouts, see tests/fixtures/README.md).
#include "conn/device_choice.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

namespace rdmacheck::conn {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

std::vector<DeviceInfo> devices(const std::string& fixture) {
  return read_rdma_devices(FsRoot(kFixtures + "/" + fixture));
}

Result<GidChoice> gid(const std::string& fixture, int port, int forced, const std::string& addr) {
  const auto devs = devices(fixture);
  const PortInfo& p = devs.at(0).ports.at(static_cast<size_t>(port - 1));
  return choose_gid(gid_candidates(p), p.ethernet(), forced, addr,
                    devs[0].name + " port " + std::to_string(port));
}

TEST(DeviceChoice, TheRoceV2GidOfTheSourceAddress) {
  // rxe: GID 0 is the IPv6 link-local, GID 1 the IPv4-mapped 198.18.0.1.
  auto c = gid("rxe-lab-h1", 1, -1, "198.18.0.1");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->index, 1);
  EXPECT_TRUE(c->warnings.empty());
  // mlx5: v1 and v2 of each address; the v2 one of the address is 3, not the v1 at 2.
  c = gid("mlx5-healthy", 1, -1, "172.16.1.21");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 3);
  // IPv6: the link-local v2 GID carries that address.
  c = gid("mlx5-healthy", 1, -1, "fe80::b83f:d2ff:fe12:a0c4");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 1);
}

TEST(DeviceChoice, AnotherAddressFallsBackToTheFirstIpv4RoceV2GidAndSaysSo) {
  auto c = gid("mlx5-healthy", 1, -1, "10.0.0.9");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 3);
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_NE(c->warnings[0].find("no RoCE v2 GID carries 10.0.0.9"), std::string::npos);
}

TEST(DeviceChoice, OnlyRoceV1MeansNoGidToUse) {
  auto c = gid("mlx4-degraded", 1, -1, "192.168.11.21");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("no RoCE v2 GID for 192.168.11.21"), std::string::npos);
}

TEST(DeviceChoice, AForcedGidIsUsedAndItsProblemsNamed) {
  auto c = gid("rxe-lab-h1", 1, 0, "198.18.0.1");  // the field guide's -x 0 pitfall
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 0);
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_NE(c->warnings[0].find("link-local"), std::string::npos);
  EXPECT_NE(c->warnings[1].find("is not 198.18.0.1"), std::string::npos);
  c = gid("mlx5-healthy", 1, 2, "172.16.1.21");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->warnings.at(0).find("RoCE v1"), std::string::npos);
  EXPECT_FALSE(gid("rxe-lab-h1", 1, 7, "198.18.0.1").ok());  // an empty slot
}

TEST(DeviceChoice, TheFirstActivePortUnlessForced) {
  const auto devs = device_candidates(devices("mlx4-degraded"));
  auto p = choose_device_port(devs, DeviceChoice{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "mlx4_0");
  EXPECT_EQ(p->port, 1);
  p = choose_device_port(devs, DeviceChoice{"", 2, -1});  // forced onto the DOWN port
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->port, 2);
  EXPECT_FALSE(choose_device_port(devs, DeviceChoice{"", 3, -1}).ok());
  auto missing = choose_device_port(devs, DeviceChoice{"mlx5_9", 0, -1});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("no RDMA device named 'mlx5_9'"), std::string::npos);
}

TEST(DeviceChoice, AnActiveDeviceWinsOverAnEarlierDownOne) {
  const std::vector<DeviceCandidate> devs = {{"mlx5_0", {{1, false}}}, {"mlx5_1", {{1, true}}}};
  auto p = choose_device_port(devs, DeviceChoice{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "mlx5_1");
  EXPECT_FALSE(choose_device_port({}, DeviceChoice{}).ok());
}

// Hosts with several NICs, as the multi-NIC field notes describe them: the
// GID tables are written out here (RoCE v2 entries of the IPv4-mapped and
// IPv6 addresses each NIC carries).
GidCandidate v2(int index, const std::string& address) {
  GidCandidate g;
  g.index = index;
  g.type = GidType::kRoceV2;
  in6_addr a6{};
  in_addr a4{};
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) {
    g.raw[10] = g.raw[11] = 0xff;
    std::memcpy(&g.raw[12], &a4, 4);
  } else if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) {
    std::memcpy(g.raw.data(), &a6, 16);
  }
  return g;
}

DeviceCandidate nic(const std::string& name, bool active, std::vector<GidCandidate> gids) {
  return DeviceCandidate{name, {PortCandidate{1, active, std::move(gids)}}};
}

TEST(DeviceChoice, TheNicThatCarriesTheSourceAddressWinsWhateverTheOrder) {
  // mlx5_0 is on the storage network, mlx5_1 on the one towards the peer.
  const std::vector<DeviceCandidate> devs = {
      nic("mlx5_0", true, {v2(0, "fe80::1"), v2(1, "10.1.0.5")}),
      nic("mlx5_1", true, {v2(0, "fe80::2"), v2(1, "10.2.0.5")}),
  };
  auto p = choose_device_port(devs, DeviceChoice{}, "10.2.0.5");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "mlx5_1");
  EXPECT_NE(p->why.find("carries 10.2.0.5"), std::string::npos) << p->why;
  // Reversed creation order, same answer.
  const std::vector<DeviceCandidate> reversed = {devs[1], devs[0]};
  EXPECT_EQ(choose_device_port(reversed, DeviceChoice{}, "10.1.0.5")->device, "mlx5_0");
  // No NIC carries the address (a route through a plain Ethernet NIC): the first ACTIVE one.
  p = choose_device_port(devs, DeviceChoice{}, "192.0.2.7");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "mlx5_0");
  EXPECT_EQ(p->why, "the first ACTIVE port");
}

TEST(DeviceChoice, FourNicsIpv6AndADuplicateSubnet) {
  // Two NICs in the same subnet (a classic cause of asymmetric routes): the
  // kernel's source address still names one of them.
  const std::vector<DeviceCandidate> devs = {
      nic("rxe0", false, {v2(1, "198.18.0.1")}),
      nic("rxe1", true, {v2(1, "198.18.1.1"), v2(2, "2001:db8:1::1")}),
      nic("rxe2", true, {v2(1, "198.18.2.1")}),
      nic("rxe3", true, {v2(1, "198.18.2.9")}),
  };
  EXPECT_EQ(choose_device_port(devs, DeviceChoice{}, "2001:db8:1::1")->device, "rxe1");
  EXPECT_EQ(choose_device_port(devs, DeviceChoice{}, "198.18.2.9")->device, "rxe3");
  EXPECT_EQ(choose_device_port(devs, DeviceChoice{}, "198.18.2.1")->device, "rxe2");
  // The NIC that carries the address is DOWN: still that one (the report says
  // why nothing passes) rather than another NIC that cannot reach the peer.
  auto p = choose_device_port(devs, DeviceChoice{}, "198.18.0.1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "rxe0");
  EXPECT_NE(p->why.find("not ACTIVE"), std::string::npos);
  // -d still wins over the route.
  EXPECT_EQ(choose_device_port(devs, DeviceChoice{"rxe2", 0, -1}, "198.18.1.1")->device, "rxe2");
}

// What the report says: route -> netdev -> device, port, GID index; the
// server's side names the address the client connected to; forced flags are
// named as typed, beside the route they override.
TEST(DeviceChoice, TheChoiceIsExplainedFromRouteToGid) {
  const std::vector<DeviceCandidate> devs = {
      nic("rxe0", true, {v2(0, "fe80::1"), v2(1, "198.18.0.2")}),
      nic("rxe1", true, {v2(0, "fe80::2"), v2(1, "198.18.1.2")}),
  };
  auto p = choose_device_port(devs, DeviceChoice{}, "198.18.1.2");
  ASSERT_TRUE(p.ok());
  ChoiceStory s{.peer_address = "198.18.1.1",
                .local_address = "198.18.1.2",
                .netdev = "eth1",
                .device = p->device,
                .port = p->port,
                .gid_index = 1,
                .gid_type = "RoCE v2",
                .device_why = p->why};
  EXPECT_EQ(explain_choice(s),
            "route to 198.18.1.1 from 198.18.1.2 via eth1 -> rxe1 port 1, GID index 1 (RoCE v2) "
            "(its GID table carries 198.18.1.2, the address this host reaches the peer from)");
  s.server = true;
  EXPECT_EQ(explain_choice(s).rfind("the client (198.18.1.1) connected to 198.18.1.2 via eth1 -> "
                                    "rxe1 port 1, GID index 1",
                                    0),
            0u)
      << explain_choice(s);
  s.server = false;
  s.device = "rxe0";
  s.netdev = "eth0";
  s.forced = forced_flags(DeviceChoice{"rxe0", 0, 1});
  EXPECT_EQ(s.forced, "-d rxe0 -x 1");
  EXPECT_EQ(explain_choice(s),
            "forced by -d rxe0 -x 1: rxe0 port 1, GID index 1 (RoCE v2) on eth0; the route to "
            "198.18.1.1 leaves from 198.18.1.2");
  EXPECT_EQ(forced_flags(DeviceChoice{}), "");
  EXPECT_EQ(forced_flags(DeviceChoice{"", 2, -1}), "--ib-port 2");
}

TEST(DeviceChoice, ACapturedRxeHostIsChosenByItsAddress) {
  const auto devs = device_candidates(devices("rxe-lab-h1"));
  auto p = choose_device_port(devs, DeviceChoice{}, "198.18.0.1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device, "rxe0");
  EXPECT_NE(p->why.find("carries 198.18.0.1"), std::string::npos) << p->why;
}

}  // namespace
}  // namespace rdmacheck::conn
