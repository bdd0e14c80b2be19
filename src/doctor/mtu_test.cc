#include "doctor/mtu.h"

#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Mtu, RoceMtuTheNetdevAllows) {
  EXPECT_EQ(roce_mtu_for(1500), 1024);
  EXPECT_EQ(roce_mtu_for(9000), 4096);
  EXPECT_EQ(roce_mtu_for(4192), 4096);
  EXPECT_EQ(roce_mtu_for(4191), 2048);
  EXPECT_EQ(roce_mtu_for(1400), 1024);
  EXPECT_EQ(roce_mtu_for(1119), 512);  // 1023 bytes left after the headers
  EXPECT_EQ(roce_mtu_for(300), 0);
}

TEST(Mtu, HardwareOn1500IsAWarning) {
  const auto rs = check_mtu(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"mtu-not-jumbo"});
  EXPECT_EQ(rs[0].status(), Severity::kWarn);
  EXPECT_EQ(fact(rs[0], "roce_mtu_allowed_bytes"), "1024");
  EXPECT_EQ(fact(rs[0], "active_mtu_bytes"), "1024");
  EXPECT_NE(rs[0].findings[0].fix.find("ip link set ens1f0np0 mtu 9000"), std::string::npos);
}

TEST(Mtu, SoftRoceOn1500IsAnInfo) {
  const auto rs = check_mtu(Fixture("rxe-lab-doctor-healthy").m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"mtu-not-jumbo"});
  EXPECT_EQ(rs[0].status(), Severity::kInfo);
  // ibv_query_port in the guest agreed with the arithmetic.
  EXPECT_EQ(fact(rs[0], "active_mtu_bytes"), "1024");
}

TEST(Mtu, JumboIsFine) { EXPECT_TRUE(ids(check_mtu(Fixture("mlx5-healthy").m())).empty()); }

}  // namespace
}  // namespace rdmacheck::doctor
