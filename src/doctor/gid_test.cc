#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Gid, RoceV1OnlyPort) {
  const auto rs = check_gids(Fixture("mlx4-degraded").m());
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(ids({rs[0]}), std::vector<std::string>{"gid-roce-v1-only"});
  EXPECT_NE(rs[0].findings[0].fix.find("roce_mode=2"), std::string::npos);
}

TEST(Gid, PicksTheGidIndexForEachSubnet) {
  const auto rs = check_gids(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(fact(rs[0], "gid_index_for_peers_in"), R"({"10.10.10.0/24":3})");
  const Finding* f = find(rs, FindingId::kGidIndex0NotRoutable);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->fix, "pass the GID index explicitly: -x 3 for peers in 10.10.10.0/24");
}

// The lab guest: GID 0 is link-local RoCE v2, GID 1 carries 198.18.0.1.
TEST(Gid, SoftRoceInTheLab) {
  const auto rs = check_gids(Fixture("rxe-lab-doctor-healthy").m());
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(fact(rs[0], "gid_index_for_peers_in"), R"({"198.18.0.0/24":1})");
  EXPECT_EQ(ids(rs), std::vector<std::string>{"gid-index-0-not-routable"});
}

TEST(Gid, AddressWithoutGidAndLinkLocalOnly) {
  const ScratchCopy s("mlx5-healthy", "gid-missing");
  s.write("/capture/addresses.json",
          R"([{"netdev": "ens2f0np0", "family": 4, "address": "172.16.1.21", "prefix_len": 24},
              {"netdev": "ens2f0np0", "family": 4, "address": "172.16.9.9", "prefix_len": 24}])");
  auto rs = check_gids(Fixture(s.name()).m());
  const Finding* f = find(rs, FindingId::kGidMissingForAddress);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("172.16.9.9"), std::string::npos);
  for (const char* idx : {"2", "3"}) {
    s.remove(std::string("/sys/class/infiniband/mlx5_0/ports/1/gids/") + idx);
  }
  s.write(
      "/capture/addresses.json",
      R"([{"netdev": "ens2f0np0", "family": 6, "address": "fe80::b83f:d2ff:fe12:a0c4", "prefix_len": 64}])");
  rs = check_gids(Fixture(s.name()).m());
  EXPECT_EQ(ids(rs), std::vector<std::string>{"gid-link-local-only"});
}

TEST(Gid, UnreadableAddressesAreSaidNotGuessed) {
  const ScratchCopy s("mlx5-healthy", "gid-noaddr");
  s.remove("/capture/addresses.json");
  const auto rs = check_gids(Fixture(s.name()).m());
  EXPECT_NE(fact(rs[0], "addresses").find("could not read"), std::string::npos);
  EXPECT_TRUE(ids(rs).empty());
}

}  // namespace
}  // namespace rdmacheck::doctor
