#include "sysfs/fs_root.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <type_traits>

#include "testing/temp_dir.h"

namespace rdmacheck {
namespace {

namespace fs = std::filesystem;

class Log : public FsObserver {
 public:
  void seen(const std::string& abs, Access how) override { log[abs] = how; }
  std::map<std::string, Access> log;
};

fs::path tree() {
  const auto d = test_util::make_temp_dir("fsroot-test");
  fs::create_directories(d / "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
  fs::create_directories(d / "sys/class/infiniband");
  std::ofstream(d / "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/numa_node") << "1\n";
  fs::create_symlink("../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0",
                     d / "sys/class/infiniband/mlx5_0");
  fs::create_symlink("../../../../etc", d / "sys/class/infiniband/escape");
  return d;
}

TEST(FsRoot, ResolvesLinksInsideTheRoot) {
  const FsRoot root(tree());
  EXPECT_EQ(root.resolve("/sys/class/infiniband/mlx5_0"),
            "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
  EXPECT_EQ(root.read_line("/sys/class/infiniband/mlx5_0/numa_node"), "1");
  EXPECT_FALSE(root.resolve("/sys/class/infiniband/escape").has_value());  // leaves the root
  EXPECT_FALSE(root.resolve("/sys/class/infiniband/absent").has_value());
  fs::remove_all(root.root());
}

TEST(FsRoot, ObserverSeesEveryAccessOfCopies) {
  FsRoot root(tree());
  auto log = std::make_shared<Log>();
  root.observe(log);
  const FsRoot copy = root;  // the observer travels with copies (checks take FsRoot by value)
  (void)copy.read_line("/sys/class/infiniband/mlx5_0/numa_node");
  (void)copy.list("/sys/class/infiniband");
  (void)copy.exists("/sys/module/ib_core");
  (void)copy.link_target("/sys/class/infiniband/mlx5_0");
  EXPECT_EQ(log->log.at("/sys/class/infiniband/mlx5_0/numa_node"), FsObserver::Access::kRead);
  EXPECT_EQ(log->log.at("/sys/class/infiniband"), FsObserver::Access::kList);
  EXPECT_EQ(log->log.at("/sys/module/ib_core"), FsObserver::Access::kExists);
  EXPECT_EQ(log->log.at("/sys/class/infiniband/mlx5_0"), FsObserver::Access::kLink);
  fs::remove_all(root.root());
}

// Whoever holds an FsRoot names its machine: there is no default to forget.
static_assert(!std::is_default_constructible_v<FsRoot>);

// A root nobody injected (FsRoot::none(), what options structs start from)
// reads nothing, not the live machine: /proc/self/status exists on every
// Linux host, and still is neither read nor found.
TEST(FsRoot, AnUninjectedRootIsNoMachineAtAll) {
  const FsRoot none = FsRoot::none();
  EXPECT_FALSE(none.injected());
  EXPECT_FALSE(none.is_live());
  EXPECT_FALSE(none.read("/proc/self/status").ok());
  EXPECT_FALSE(none.exists("/proc/self/status"));
  EXPECT_TRUE(none.list("/proc/self").empty());
  EXPECT_FALSE(none.link_target("/proc/self/exe").has_value());
  EXPECT_FALSE(none.resolve("/proc/self").has_value());
  const FsRoot live = FsRoot::live();
  EXPECT_TRUE(live.is_live());
  EXPECT_TRUE(live.exists("/proc/self/status"));
  EXPECT_FALSE(FsRoot(std::string(RDMACHECK_FIXTURES) + "/rxe-lab-h1").is_live());
}

}  // namespace
}  // namespace rdmacheck
