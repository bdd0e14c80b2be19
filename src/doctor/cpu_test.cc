#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Cpu, PowersaveAndDeepCstates) {
  const auto rs = check_cpu(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(ids(rs), (std::vector<std::string>{"cpu-governor-powersave", "deep-cstates-enabled"}));
  const Finding& f = rs[0].findings[0];
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.summary.substr(0, 46), "16 of 16 CPUs run the powersave governor: smal");
  EXPECT_NE(f.evidence[1].find("intel_pstate"), std::string::npos);
  EXPECT_EQ(rs[0].findings[1].severity, Severity::kInfo);
  EXPECT_NE(rs[0].findings[1].summary.find("C6 (exit latency 133 us)"), std::string::npos);
}

TEST(Cpu, PerformanceWithC6DisabledIsQuiet) {
  const auto rs = check_cpu(Fixture("mlx5-healthy").m());
  EXPECT_TRUE(ids(rs).empty());
  EXPECT_EQ(fact(rs[0], "governors"), R"({"performance":16})");
}

TEST(Cpu, NoCpufreqIsSaidHonestly) {
  // The capture of the development VM and of a lab guest: no cpufreq there.
  for (const char* name : {"no-rdma-vm", "rxe-lab-doctor-healthy"}) {
    EXPECT_EQ(ids(check_cpu(Fixture(name).m())), std::vector<std::string>{"cpufreq-not-exposed"})
        << name;
  }
}

}  // namespace
}  // namespace rdmacheck::doctor
