#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Port, DownPortIsExplainedByItsPhysicalState) {
  const Fixture fx("mlx4-degraded");
  const auto rs = check_ports(fx.m());
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_TRUE(rs[0].findings.empty());
  ASSERT_EQ(ids({rs[1]}), std::vector<std::string>{"port-down"});
  const Finding& f = rs[1].findings[0];
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.evidence[1].find("Polling: no link partner"), std::string::npos);
  EXPECT_NE(f.fix.find("ethtool enp129s0d1"), std::string::npos) << f.fix;
}

TEST(Port, InfiniBandInitMeansNoSubnetManager) {
  const ScratchCopy s("mlx5-healthy", "port-init");
  const std::string p = "/sys/class/infiniband/mlx5_0/ports/1/";
  s.write(p + "state", "2: INIT\n");
  s.write(p + "link_layer", "InfiniBand\n");
  const Fixture fx(s.name());
  const auto rs = check_ports(fx.m());
  const Finding* f = find(rs, FindingId::kPortNotActive);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->fix.find("subnet manager"), std::string::npos);
  s.write(p + "state", "3: ARMED\n");
  const Fixture armed(s.name());
  EXPECT_NE(find(check_ports(armed.m()), FindingId::kPortNotActive)->evidence[1].find("ARMED"),
            std::string::npos);
}

TEST(Port, SoftRoceIsAnInfoNotAWarning) {
  const Fixture fx("rxe-lab-doctor-healthy");
  const auto rs = check_ports(fx.m());
  EXPECT_EQ(ids(rs), std::vector<std::string>{"software-rdma-device"});
  EXPECT_EQ(rs[0].status(), Severity::kInfo);
  EXPECT_NE(rs[0].findings[0].evidence[0].find("2.5 Gb/sec"), std::string::npos);
}

TEST(Port, HealthyHardwarePortHasNoFinding) {
  EXPECT_TRUE(ids(check_ports(Fixture("mlx5-healthy").m())).empty());
}

}  // namespace
}  // namespace rdmacheck::doctor
