#include "devices/inventory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "testing/temp_dir.h"

namespace rdmacheck::devices {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

TEST(Inventory, AMachineWithoutRdmaHasNoDevicesAndSaysSo) {
  const auto dir = test_util::make_temp_dir("empty-root");
  std::filesystem::create_directories(dir / "sys/class/net/eth0");
  const auto inv = take_inventory(FsRoot(dir), false);
  EXPECT_TRUE(inv.devices.empty());
  EXPECT_NE(format_text(inv).find("No RDMA device found."), std::string::npos);
}

TEST(Inventory, JsonOfCapturedRxe) {
  const auto inv = take_inventory(FsRoot(kFixtures + "/rxe-lab-h1"), false);
  const auto j = to_json(inv);
  ASSERT_EQ(j["devices"].size(), 1u);
  const auto& port = j["devices"][0]["ports"][0];
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["gids"][1]["type"], "RoCE v2");
  EXPECT_EQ(port["gids"][1]["address"], "198.18.0.1");
  EXPECT_TRUE(port["active_mtu_bytes"].is_null());  // only libibverbs knows it; not asked here
  EXPECT_EQ(port["rate_gbps"], 2.5);
  EXPECT_EQ(j["devices"][0]["node_guid"], "5054:00ff:fe12:3401");
  const std::string text = format_text(inv);
  EXPECT_NE(text.find("rxe0"), std::string::npos);
  EXPECT_NE(text.find("ffff:c612:0001"), std::string::npos);
}

// A lab guest with two NICs whose eth1 also carries an address in eth0's
// subnet (tests/fixtures/rxe-lab-2nic-dup, its capture/routing.json): which
// NIC reaches which subnet, and the shared one named once.
TEST(Inventory, TwoNicsShowTheirSubnetsAndTheOneTheyShare) {
  const auto inv = take_inventory(FsRoot(kFixtures + "/rxe-lab-2nic-dup"), false);
  ASSERT_EQ(inv.nics.size(), 2u);
  EXPECT_EQ(inv.nics[0].netdev, "eth0");
  EXPECT_EQ(inv.nics[0].port, "rxe0/1");
  EXPECT_EQ(inv.nics[1].subnets,
            (std::vector<std::string>{"198.18.0.0/24", "198.18.1.0/24", "fe80::/64"}));
  EXPECT_EQ(inv.nics[1].duplicates, std::vector<std::string>{"198.18.0.0/24 also on eth0"});
  const std::string text = format_text(inv);
  EXPECT_NE(text.find("duplicate subnet: 198.18.0.0/24 on eth0 and eth1"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("fe80::/64 on"), std::string::npos) << "every IPv6 NIC has fe80::/64";
  EXPECT_EQ(to_json(inv)["nics"][1]["device"], "rxe1/1");
  // One NIC: no routes section.
  EXPECT_TRUE(take_inventory(FsRoot(kFixtures + "/rxe-lab-doctor-healthy"), false).nics.empty());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    out.push_back(text.substr(at, nl - at));
  }
  return out;
}

// The text shows what a ticket needs (firmware, node GUID), and the lab
// capture's GID 0 carries an IPv6 link-local address
// (fe80::5054:ff:fe12:3401, 24 characters) that must not push NETDEV out of
// its column.
TEST(Inventory, TextShowsFirmwareGuidAndKeepsColumnsWithIpv6) {
  const auto inv = take_inventory(FsRoot(kFixtures + "/rxe-lab-h1"), false);
  const std::string text = format_text(inv);
  EXPECT_NE(text.find("NODE_GUID"), std::string::npos) << text;
  EXPECT_NE(text.find("5054:00ff:fe12:3401"), std::string::npos) << text;
  EXPECT_NE(text.find("FW_VER"), std::string::npos) << text;
  const auto lines = lines_of(text);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("ADDRESS") != std::string::npos;
  });
  ASSERT_NE(header, lines.end()) << text;
  const size_t netdev_col = header->find("NETDEV");
  int gid_rows = 0;
  for (auto it = header + 1; it != lines.end() && it->rfind("rxe0", 0) == 0; ++it) {
    EXPECT_EQ(it->rfind("eth0"), netdev_col) << *it;
    ++gid_rows;
  }
  EXPECT_EQ(gid_rows, 2);
  EXPECT_NE(text.find("fe80::5054:ff:fe12:3401 eth0"), std::string::npos) << text;
}

// The hardware fixture's firmware (tests/fixtures/README.md: mlx5-healthy).
TEST(Inventory, TextShowsHardwareFirmware) {
  const auto inv = take_inventory(FsRoot(kFixtures + "/mlx5-healthy"), false);
  const std::string text = format_text(inv);
  EXPECT_NE(text.find("22.39.1002"), std::string::npos) << text;
  EXPECT_NE(text.find("100 Gb/s"), std::string::npos) << text;
}

}  // namespace
}  // namespace rdmacheck::devices
