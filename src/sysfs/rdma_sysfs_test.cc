#include "sysfs/rdma_sysfs.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

TEST(RdmaSysfs, ParsesNumberedAttributes) {
  EXPECT_EQ(parse_numbered("4: ACTIVE"), (std::pair<int, std::string>{4, "ACTIVE"}));
  EXPECT_EQ(parse_numbered("5: LinkUp"), (std::pair<int, std::string>{5, "LinkUp"}));
  EXPECT_EQ(parse_numbered("2: Polling").first, 2);
}

// The state's number is typed: 4 is ACTIVE, whatever the text; a number
// outside the IB states is unknown, never active.
TEST(RdmaSysfs, PortStateIsTyped) {
  PortInfo p;
  p.state = 4;
  EXPECT_TRUE(p.active());
  p.state = 2;
  EXPECT_EQ(p.port_state(), PortState::kInit);
  EXPECT_FALSE(p.active());
  p.state = 7;
  EXPECT_EQ(p.port_state(), PortState::kUnknown);
  EXPECT_EQ(parse_enum<PortState>("ACTIVE"), PortState::kActive);
  EXPECT_EQ(name_of(PortState::kDown), "DOWN");
}

TEST(RdmaSysfs, ParsesRates) {
  EXPECT_DOUBLE_EQ(parse_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("100 Gb/sec (4X EDR)"), 100);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("200 Gb/sec (2X HDR)"), 200);
}

TEST(RdmaSysfs, GidAddresses) {
  EXPECT_EQ(gid_address("0000:0000:0000:0000:0000:ffff:c612:0001", GidType::kRoceV2), "198.18.0.1");
  EXPECT_EQ(gid_address("fe80:0000:0000:0000:5054:00ff:fe12:3401", GidType::kRoceV2),
            "fe80::5054:ff:fe12:3401");
  // InfiniBand GIDs are subnet prefix + GUID, not addresses.
  EXPECT_EQ(gid_address("fe80:0000:0000:0000:0002:c903:0031:7c21", GidType::kIb), "");
  EXPECT_EQ(gid_address("garbage", GidType::kRoceV2), "");
}

TEST(RdmaSysfs, GidTypes) {
  EXPECT_EQ(parse_gid_type("RoCE v2"), GidType::kRoceV2);
  EXPECT_EQ(parse_gid_type("IB/RoCE v1"), GidType::kRoceV1);
  EXPECT_EQ(parse_gid_type(""), GidType::kUnknown);
}

// The real capture from a lab guest (tests/fixtures/README.md).
TEST(RdmaSysfs, ReadsCapturedRxeDevice) {
  const auto devs = read_rdma_devices(FsRoot(kFixtures + "/rxe-lab-h1"));
  ASSERT_EQ(devs.size(), 1u);
  const auto& d = devs[0];
  EXPECT_EQ(d.name, "rxe0");
  EXPECT_EQ(d.driver, "rxe");
  EXPECT_EQ(d.pci_address, "");
  ASSERT_EQ(d.ports.size(), 1u);
  const auto& p = d.ports[0];
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.state, 4);
  EXPECT_EQ(p.state_name, "ACTIVE");
  EXPECT_EQ(p.phys_state_name, "LinkUp");
  EXPECT_EQ(p.link_layer, LinkLayer::kEthernet);
  EXPECT_DOUBLE_EQ(p.rate_gbps, 2.5);
  EXPECT_EQ(p.netdev, "eth0");
  ASSERT_EQ(p.gids.size(), 2u);  // the other 14 captured slots are all zero
  EXPECT_EQ(p.gids[0].index, 0);
  EXPECT_EQ(p.gids[0].type, GidType::kRoceV2);
  EXPECT_TRUE(p.gids[0].link_local());
  EXPECT_EQ(p.gids[1].index, 1);
  EXPECT_EQ(p.gids[1].address, "198.18.0.1");
  EXPECT_TRUE(p.gids[1].ipv4());
  EXPECT_EQ(p.gids[1].netdev, "eth0");
}

TEST(RdmaSysfs, NoClassDirectoryMeansNoDevices) {
  EXPECT_TRUE(read_rdma_devices(FsRoot(kFixtures + "/does-not-exist")).empty());
}

}  // namespace
}  // namespace rdmacheck
