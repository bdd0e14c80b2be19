#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Lossless, PfcAndEcnOnPriority3) {
  const auto rs = check_lossless(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].findings.empty());
  EXPECT_EQ(fact(rs[0], "pfc_priorities"), "[3]");
  EXPECT_EQ(fact(rs[0], "trust"), "dscp");
  EXPECT_EQ(fact(rs[0], "ecn_np_priorities"), "[3]");
  EXPECT_EQ(fact(rs[0], "pfc_pause_sent"), R"({"3":1532})");
}

TEST(Lossless, NeitherPfcNorEcn) {
  const ScratchCopy s("mlx5-healthy", "lossless-off");
  s.write("/capture/dcb.json", R"({"ens2f0np0": {"pfc_present": true, "pfc_cap": 8,
    "pfc_enabled": 0}})");
  for (const char* role : {"roce_np", "roce_rp"}) {
    s.write(std::string("/sys/class/net/ens2f0np0/ecn/") + role + "/enable/3", "0\n");
  }
  const auto rs = check_lossless(Fixture(s.name()).m());
  EXPECT_EQ(ids(rs), std::vector<std::string>{"lossless-not-configured"});
  EXPECT_EQ(rs[0].status(), Severity::kWarn);
}

TEST(Lossless, PfcOffWithEcnUnknownIsAnInfo) {
  const auto rs = check_lossless(Fixture("mlx4-degraded").m());
  EXPECT_EQ(ids(rs), (std::vector<std::string>{"pfc-not-enabled", "pfc-not-enabled"}));
}

// virtio under Soft-RoCE: the kernel answers DCB with EOPNOTSUPP.
TEST(Lossless, NotReadableOnVirtio) {
  const auto rs = check_lossless(Fixture("rxe-lab-doctor-healthy").m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"lossless-not-readable"});
  EXPECT_NE(rs[0].findings[0].evidence[0].find("Operation not supported"), std::string::npos)
      << rs[0].findings[0].evidence[0];
  EXPECT_TRUE(ids(check_lossless(Fixture("mlx5-healthy").m())).empty());
}

}  // namespace
}  // namespace rdmacheck::doctor
