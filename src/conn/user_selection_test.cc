#include "conn/user_selection.h"

#include <gtest/gtest.h>

namespace rdmacheck::conn {
namespace {

// The lab guest h1 (198.18.0.1): GID 0 link-local IPv6, GID 1 IPv4-mapped.
std::vector<DeviceInfo> rxe_lab() {
  return read_rdma_devices(FsRoot(std::string(RDMACHECK_FIXTURES) + "/rxe-lab-h1"));
}

TEST(UserSelection, NothingForcedIsNothingToBlame) {
  const auto u = user_selection(rxe_lab(), DeviceChoice{}, "198.18.0.1");
  EXPECT_FALSE(u.any());
  EXPECT_FALSE(u.automatic.has_value());
}

// `check h1 -x 0` in the lab: what -x 0 selects and what rdmacheck would use.
TEST(UserSelection, ForcedGidZeroAgainstTheAutomaticChoice) {
  const auto u = user_selection(rxe_lab(), DeviceChoice{.gid_index = 0}, "198.18.0.1");
  ASSERT_TRUE(u.forced && u.automatic);
  EXPECT_EQ(u.forced->gid_index, 0);
  EXPECT_EQ(u.forced->gid.rfind("fe80:", 0), 0u) << u.forced->gid;
  EXPECT_EQ(u.automatic->gid_index, 1);
  EXPECT_EQ(u.automatic->gid, "0000:0000:0000:0000:0000:ffff:c612:0001");
  EXPECT_EQ(u.automatic->port_state, PortState::kActive);
  EXPECT_EQ(u.automatic->netdev, "eth0");
  EXPECT_NE(why_selection_fails(u, std::nullopt, "").find("link-local"), std::string::npos);
}

TEST(UserSelection, AnEmptyGidSlotCannotBeSelected) {
  const auto u = user_selection(rxe_lab(), DeviceChoice{.gid_index = 7}, "198.18.0.1");
  EXPECT_FALSE(u.forced.has_value());
  ASSERT_TRUE(u.automatic.has_value());
  EXPECT_EQ(why_selection_fails(u, std::nullopt, "rxe0 port 1 GID index 7 is empty"),
            "it could not be used: rxe0 port 1 GID index 7 is empty");
}

}  // namespace
}  // namespace rdmacheck::conn
