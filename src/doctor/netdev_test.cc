#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Netdev, LinkBelowCapabilityBlamesTheSwitchWhenThePartnerOffersLess) {
  const auto rs = check_netdevs(Fixture("mlx4-degraded").m());
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_EQ(ids({rs[0]}), std::vector<std::string>{"link-speed-below-capability"});
  const Finding& f = rs[0].findings[0];
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.summary, "enp129s0 negotiated 10 Gb/s but the NIC supports 40 Gb/s");
  EXPECT_NE(f.evidence.back().find("link partner advertises"), std::string::npos);
  EXPECT_NE(f.fix.find("switch port offers only 10 Gb/s"), std::string::npos) << f.fix;
  // The down port's netdev has no speed: said, not warned.
  EXPECT_EQ(ids({rs[1]}), std::vector<std::string>{"link-speed-unknown"});
}

TEST(Netdev, NoPartnerInformationGivesTheGeneralFix) {
  const ScratchCopy s("mlx5-healthy", "netdev-25g");
  s.write("/capture/ethtool.json", R"({"ens2f0np0": {"speed_mbps": 25000, "duplex": "full",
    "autoneg": true, "supported": ["25000baseCR/Full", "100000baseCR4/Full"],
    "advertised": ["25000baseCR/Full"], "partner": []}})");
  const auto rs = check_netdevs(Fixture(s.name()).m());
  const Finding* f = find(rs, FindingId::kLinkSpeedBelowCapability);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence[2].find("advertises at most 25 Gb/s"), std::string::npos);
  EXPECT_NE(f->fix.find("cable/optic rated for 100 Gb/s"), std::string::npos);
  // The port says 100 Gb/s, the link 25 Gb/s.
  EXPECT_NE(find(rs, FindingId::kPortRateDiffersFromLink), nullptr);
}

TEST(Netdev, HalfDuplex) {
  const ScratchCopy s("mlx5-healthy", "netdev-half");
  s.write("/capture/ethtool.json", R"({"ens2f0np0": {"speed_mbps": 100000, "duplex": "half",
    "supported": ["100000baseCR4/Full"]}})");
  EXPECT_EQ(ids(check_netdevs(Fixture(s.name()).m())),
            std::vector<std::string>{"link-half-duplex"});
}

TEST(Netdev, HealthyLinkAndTheLabsVirtio) {
  EXPECT_TRUE(ids(check_netdevs(Fixture("mlx5-healthy").m())).empty());
  const auto lab = check_netdevs(Fixture("rxe-lab-doctor-healthy").m());
  ASSERT_EQ(lab.size(), 1u);
  EXPECT_EQ(fact(lab[0], "driver"), "virtio_net");
  EXPECT_EQ(ids(lab), std::vector<std::string>{"link-speed-unknown"});
}

}  // namespace
}  // namespace rdmacheck::doctor
