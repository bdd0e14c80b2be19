#include "lab/kernel.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lab/initramfs.h"
#include "lab/vm.h"

namespace rdmacheck::lab {
namespace {

namespace fs = std::filesystem;

// A /boot and /lib/modules laid out as Debian's linux-image packages do.
class KernelTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rdmacheck-kernel-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void add_kernel(const std::string& v, bool rxe) {
    fs::create_directories(root_ / "boot");
    std::ofstream(root_ / "boot" / ("vmlinuz-" + v)) << "x";
    const fs::path m = root_ / "lib/modules" / v;
    fs::create_directories(m);
    std::ofstream dep(m / "modules.dep");
    for (const auto& name : boot_modules()) {
      dep << "kernel/somewhere/" << name << ".ko:\n";
    }
    if (rxe)
      dep << "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko: "
             "kernel/drivers/infiniband/core/ib_core.ko\n";
  }
  fs::path root_;
};

TEST_F(KernelTree, PicksTheNewestKernelWithRxe) {
  add_kernel("6.1.0-9-amd64", true);
  add_kernel("6.1.0-57-amd64", true);
  add_kernel("6.12.0-1-amd64", false);
  auto k = find_kernel(FsRoot(root_));
  ASSERT_TRUE(k.ok()) << k.error().message();
  EXPECT_EQ(k->version, "6.1.0-57-amd64");  // 6.12 lacks rdma_rxe; 57 > 9 by version order
  EXPECT_EQ(k->image, "/boot/vmlinuz-6.1.0-57-amd64");
  ASSERT_EQ(k->boot_module_paths.size(), boot_modules().size());
  EXPECT_EQ(k->boot_module_paths.back(), "/lib/modules/6.1.0-57-amd64/kernel/somewhere/9p.ko");
}

TEST_F(KernelTree, ExplainsWhenNoneFits) {
  add_kernel("6.12.0-1-amd64", false);
  auto k = find_kernel(FsRoot(root_));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message().find("no rdma_rxe"), std::string::npos);
  EXPECT_NE(k.error().message().find("linux-image-amd64"), std::string::npos);
}

TEST_F(KernelTree, NoBootAtAll) {
  auto k = find_kernel(FsRoot(root_));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message().find("apt-get install linux-image-amd64"), std::string::npos);
}

TEST_F(KernelTree, ExplicitKernel) {
  add_kernel("6.1.0-9-amd64", true);
  add_kernel("6.1.0-57-amd64", true);
  auto k = find_kernel(FsRoot(root_), "/boot/vmlinuz-6.1.0-9-amd64");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->version, "6.1.0-9-amd64");
  EXPECT_FALSE(find_kernel(FsRoot(root_), "/boot/bzImage").ok());
}

TEST(Initramfs, InitLoadsModulesInOrderAndSwitchesRoot) {
  const std::string s = initramfs_init_script();
  EXPECT_EQ(s.rfind("#!/bin/busybox sh", 0), 0u);
  EXPECT_NE(s.find("for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev "
                   "virtio_pci netfs fscache 9pnet 9pnet_virtio 9p; do"),
            std::string::npos);
  EXPECT_LT(s.find("hostroot /newroot"), s.find("switch_root"));
  EXPECT_NE(s.find("exec $B switch_root /newroot /bin/bash /run/lab/$host/init.sh"),
            std::string::npos);
}

TEST(Vm, QemuCommandLine) {
  VmSpec s;
  s.name = "h2";
  s.kernel = "/boot/vmlinuz-x";
  s.initrd = "/tmp/l/initrd.cpio";
  s.lab_dir = "/tmp/l";
  s.nics = {{"/tmp/l/h2.sock", "/tmp/l/hub-h2.sock", "52:54:00:12:34:02"},
            {"/tmp/l/h2-2.sock", "/tmp/l/hub-h2-2.sock", "52:54:00:12:35:02"}};
  const auto a = qemu_args(s);
  auto has = [&](const std::string& x) { return std::find(a.begin(), a.end(), x) != a.end(); };
  EXPECT_TRUE(has("tcg,thread=multi"));
  EXPECT_TRUE(has("qemu64"));  // not "max": TCG emulates its vector paths slowest
  EXPECT_TRUE(has("console=ttyS0 quiet loglevel=3 panic=-1 rdmacheck.host=h2"));
  EXPECT_TRUE(
      has("local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"));
  EXPECT_TRUE(
      has("dgram,id=n0,local.type=unix,local.path=/tmp/l/h2.sock,remote.type=unix,"
          "remote.path=/tmp/l/hub-h2.sock"));
  EXPECT_TRUE(has("virtio-net-pci,netdev=n0,mac=52:54:00:12:34:02,romfile="));
  // The second NIC comes after the first: the guest names them eth0, eth1 in this order.
  const auto second =
      std::find(a.begin(), a.end(), "virtio-net-pci,netdev=n1,mac=52:54:00:12:35:02,romfile=");
  ASSERT_NE(second, a.end());
  EXPECT_GT(second, std::find(a.begin(), a.end(),
                              "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:02,romfile="));
  EXPECT_TRUE(
      has("dgram,id=n1,local.type=unix,local.path=/tmp/l/h2-2.sock,remote.type=unix,"
          "remote.path=/tmp/l/hub-h2-2.sock"));
  EXPECT_FALSE(has("-enable-kvm"));
  // The QMP socket: read while the guest runs, never waited for.
  EXPECT_TRUE(has("unix:/tmp/l/h2.qmp,server=on,wait=off"));
}

}  // namespace
}  // namespace rdmacheck::lab
