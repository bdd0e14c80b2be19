#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

// The real capture of the development VM: a kernel without RDMA, no RDMA NIC.
TEST(Presence, NoRdmaMachineIsExplained) {
  const Fixture fx("no-rdma-vm");
  const auto rs = check_presence(fx.m());
  ASSERT_EQ(ids(rs), std::vector<std::string>{"no-rdma-device"});
  const Finding& f = *find(rs, FindingId::kNoRdmaDevice);
  EXPECT_EQ(f.severity, Severity::kFail);
  std::string all;
  for (const auto& e : f.evidence) all += e + "\n";
  EXPECT_NE(all.find("ib_core is not loaded"), std::string::npos) << all;
  EXPECT_NE(all.find("has no module tree"), std::string::npos) << all;
  EXPECT_NE(all.find("0000:00:03.0 (vendor 0x1af4"), std::string::npos) << all;
  EXPECT_NE(all.find("provider libraries"), std::string::npos) << all;
  EXPECT_NE(f.fix.find("rdma link add rxe0 type rxe netdev eth0"), std::string::npos) << f.fix;
  EXPECT_NE(f.fix.find("boot a kernel with RDMA support"), std::string::npos) << f.fix;
  // No module tree for the running kernel: modprobe cannot load anything into it.
  EXPECT_EQ(f.fix.find("modprobe"), std::string::npos) << f.fix;
}

// Every command that finds no device says doctor's finding, the same one.
TEST(Presence, NoRdmaDeviceIsDoctorsFindingForEveryCommand) {
  const Fixture fx("no-rdma-vm");
  const auto f = no_rdma_device(fx.fs());
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, FindingId::kNoRdmaDevice);
  EXPECT_EQ(f->fix, find(check_presence(fx.m()), FindingId::kNoRdmaDevice)->fix);
  EXPECT_FALSE(no_rdma_device(FsRoot(kFixtures + "/rxe-lab-h1")).has_value());
}

// A ConnectX NIC whose Ethernet driver is bound but whose RDMA driver is not.
TEST(Presence, NamesTheMissingRdmaDriverOfANic) {
  const ScratchCopy s("mlx5-healthy", "presence-mlx5-ib");
  s.remove("/sys/class/infiniband");
  s.remove("/sys/module/mlx5_ib");
  s.write("/proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
  s.write("/lib/modules/6.1.0-27-amd64/kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko", "");
  const Fixture fx(s.name());
  const auto rs = check_presence(fx.m());
  const Finding* f = find(rs, FindingId::kNoRdmaDevice);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->fix.find("modprobe mlx5_ib"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.find("Soft-RoCE"), std::string::npos) << f->fix;
}

TEST(Presence, DeviceWithoutUverbsOrProvider) {
  const ScratchCopy s("mlx5-healthy", "presence-uverbs");
  s.remove("/sys/class/infiniband_verbs");
  s.remove("/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so");
  const Fixture fx(s.name());
  const auto rs = check_presence(fx.m());
  EXPECT_EQ(ids(rs), (std::vector<std::string>{"uverbs-missing", "provider-library-missing"}));
}

TEST(Presence, HealthyDevicesHaveUserSpace) {
  for (const char* name : {"mlx5-healthy", "mlx5-gen3x8", "rxe-lab-doctor-healthy"}) {
    const Fixture fx(name);
    const auto rs = check_presence(fx.m());
    ASSERT_EQ(rs.size(), 1u) << name;
    EXPECT_TRUE(rs[0].findings.empty()) << name << ": " << ids(rs).front();
  }
}

}  // namespace
}  // namespace rdmacheck::doctor
