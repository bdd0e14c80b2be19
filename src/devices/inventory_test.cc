#include "devices/inventory.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/temp_dir.h"

namespace rdmacheck::devices {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

TEST(Inventory, ExplainsAMachineWithoutRdma) {
  const auto dir = test_util::make_temp_dir("empty-root");
  std::filesystem::create_directories(dir / "sys/class/net/eth0");
  const auto inv = take_inventory(FsRoot(dir), false);
  EXPECT_TRUE(inv.devices.empty());
  ASSERT_FALSE(inv.why_none.empty());
  EXPECT_NE(inv.why_none[0].find("no RDMA core"), std::string::npos);
  EXPECT_NE(format_text(inv).find("No RDMA device found."), std::string::npos);
}

TEST(Inventory, EmptyClassDirectoryIsExplainedDifferently) {
  const auto dir = test_util::make_temp_dir("empty-class");
  std::filesystem::create_directories(dir / "sys/class/infiniband");
  std::filesystem::create_directories(dir / "sys/module/ib_core");
  const auto why = explain_no_devices(FsRoot(dir));
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why[0].find("is empty"), std::string::npos);
}

TEST(Inventory, JsonOfCapturedRxe) {
  const auto inv = take_inventory(FsRoot(kFixtures + "/rxe-lab-h1"), false);
  const auto j = to_json(inv);
  ASSERT_EQ(j["devices"].size(), 1u);
  const auto& port = j["devices"][0]["ports"][0];
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["gids"][1]["type"], "RoCE v2");
  EXPECT_EQ(port["gids"][1]["address"], "198.18.0.1");
  EXPECT_TRUE(port["active_mtu"].is_null());  // only libibverbs knows it; not asked here
  const std::string text = format_text(inv);
  EXPECT_NE(text.find("rxe0"), std::string::npos);
  EXPECT_NE(text.find("ffff:c612:0001"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::devices
