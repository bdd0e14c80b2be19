#include "doctor/pcie.h"

#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Pcie, ParsesSysfsSpeeds) {
  EXPECT_DOUBLE_EQ(parse_gts("8.0 GT/s PCIe"), 8.0);
  EXPECT_DOUBLE_EQ(parse_gts("2.5 GT/s"), 2.5);  // kernels before 5.x print no "PCIe"
  EXPECT_DOUBLE_EQ(parse_gts("16.0 GT/s PCIe"), 16.0);
  EXPECT_DOUBLE_EQ(parse_gts("Unknown"), 0);
  EXPECT_DOUBLE_EQ(parse_gts(""), 0);
  EXPECT_EQ(pcie_gen(2.5), 1);
  EXPECT_EQ(pcie_gen(8), 3);
  EXPECT_EQ(pcie_gen(32), 5);
  EXPECT_EQ(pcie_gen(64), 6);
}

TEST(Pcie, UsableBandwidth) {
  EXPECT_NEAR(usable_gbps({8, 8}), 63.0, 0.05);      // Gen3 x8 < 100 GbE
  EXPECT_NEAR(usable_gbps({8, 16}), 126.0, 0.05);    // Gen3 x16
  EXPECT_NEAR(usable_gbps({5, 8}), 32.0, 0.001);     // Gen2: 8b/10b
  EXPECT_NEAR(usable_gbps({16, 16}), 252.06, 0.01);  // Gen4 x16
  EXPECT_EQ(describe({8, 8}), "Gen3 x8 (8 GT/s)");
}

TEST(Pcie, NarrowSlotForA100GNic) {
  const auto rs = check_pcie(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(ids(rs),
            (std::vector<std::string>{"pcie-link-downgraded", "pcie-bandwidth-below-port-rate"}));
  const Finding& down = rs[0].findings[0];
  EXPECT_NE(down.evidence[0].find("LnkSta 8 GT/s x8, LnkCap 8 GT/s x16"), std::string::npos);
  EXPECT_NE(down.evidence[2].find("upstream port 0000:3a:00.0"), std::string::npos);
  EXPECT_NE(down.fix.find("slot wired Gen3 x16"), std::string::npos);
  const Finding& bw = rs[0].findings[1];
  EXPECT_NE(bw.summary.find("about 63 Gb/s, less than its ports' 100 Gb/s"), std::string::npos)
      << bw.summary;
  EXPECT_EQ(fact(rs[0], "upstream_port"), "0000:3a:00.0");
}

TEST(Pcie, LinkTrainedDownInAWideSlot) {
  const ScratchCopy s("mlx5-healthy", "pcie-trained-down");
  s.write("/sys/bus/pci/devices/0000:17:00.0/current_link_speed", "8.0 GT/s PCIe\n");
  const auto rs = check_pcie(Fixture(s.name()).m());
  const Finding* f = find(rs, FindingId::kPcieLinkDowngraded);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->fix.find("reseat"), std::string::npos);
  EXPECT_EQ(find(rs, FindingId::kPcieBandwidthBelowPortRate),
            nullptr);  // Gen3 x16 still carries 100G
}

TEST(Pcie, HealthyAndSoftware) {
  EXPECT_TRUE(ids(check_pcie(Fixture("mlx5-healthy").m())).empty());
  EXPECT_TRUE(ids(check_pcie(Fixture("mlx4-degraded").m())).empty());  // x8 card in x16 slot
  const auto rxe = check_pcie(Fixture("rxe-lab-doctor-healthy").m());
  EXPECT_EQ(ids(rxe), std::vector<std::string>{"pcie-not-applicable"});
  EXPECT_EQ(rxe[0].status(), Severity::kInfo);
}

}  // namespace
}  // namespace rdmacheck::doctor
