#include "doctor/capture.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace rdmacheck::doctor {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& tag) { return test_util::make_temp_dir("capture-test-" + tag); }

// Copies real paths of this machine, through /sys's symbolic links, so the
// copy answers the same reads.
TEST(Capture, CopiesReadFilesAndRecreatesLinks) {
  const auto dest = scratch("links");
  FsRoot live("/");
  auto rec = std::make_shared<PathRecorder>();
  live.observe(rec);
  const auto mtu = live.read_line("/sys/class/net/lo/mtu");
  const auto limits = live.read("/proc/self/limits");
  (void)live.exists("/sys/module/no_such_module");
  ASSERT_TRUE(mtu && limits.ok());
  const auto n = copy_recorded(*rec, dest);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(*n, 2);
  EXPECT_TRUE(fs::is_symlink(dest / "sys/class/net/lo"));
  EXPECT_TRUE(fs::is_symlink(dest / "proc/self"));
  const FsRoot copy(dest);
  EXPECT_EQ(copy.read_line("/sys/class/net/lo/mtu"), mtu);
  EXPECT_EQ(copy.read("/proc/self/limits").value(), *limits);
  EXPECT_EQ(copy.resolve("/sys/class/net/lo"), live.resolve("/sys/class/net/lo"));
  EXPECT_FALSE(fs::exists(dest / "sys/module/no_such_module"));
  fs::remove_all(dest);
}

TEST(Capture, ListedDirectoriesOutsideSysfsKeepTheirNames) {
  const auto src = scratch("list-src");
  fs::create_directories(src / "lib");
  std::ofstream(src / "lib" / "libfoo-rdmav34.so") << "binary";
  const auto dest = scratch("list-dest");
  PathRecorder rec;
  rec.seen(src.string() + "/lib", FsObserver::Access::kList);
  ASSERT_TRUE(copy_recorded(rec, dest).ok());
  const auto placeholder = dest / src.relative_path() / "lib" / "libfoo-rdmav34.so";
  EXPECT_TRUE(fs::exists(placeholder));
  EXPECT_EQ(fs::file_size(placeholder), 0u);
  fs::remove_all(src);
  fs::remove_all(dest);
}

TEST(Capture, UnsetGidSlotsAreLeftOut) {
  EXPECT_TRUE(unset_gid_slot("/sys/class/infiniband/rxe0/ports/1/gids/7",
                             "0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_FALSE(unset_gid_slot("/sys/class/infiniband/rxe0/ports/1/gids/1",
                              "0000:0000:0000:0000:0000:ffff:c612:0001\n"));
  EXPECT_FALSE(unset_gid_slot("/sys/class/net/eth0/mtu", "0\n"));
}

TEST(Capture, DirectoryMustBeNewOrEmpty) {
  const auto d = scratch("dir");
  EXPECT_TRUE(prepare_capture_dir(d).ok());
  EXPECT_TRUE(fs::is_directory(d));
  EXPECT_TRUE(prepare_capture_dir(d).ok());  // empty: fine
  std::ofstream(d / "x") << "x";
  const auto st = prepare_capture_dir(d);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("is not empty"), std::string::npos);
  EXPECT_FALSE(prepare_capture_dir(d / "x").ok());
  fs::remove_all(d);
}

TEST(Capture, WritesSourceAnswersUnderCapture) {
  const auto d = scratch("files");
  ASSERT_TRUE(write_capture_files(d, {{"qps", nlohmann::json::array()}}).ok());
  EXPECT_TRUE(fs::exists(d / "capture" / "qps.json"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace rdmacheck::doctor
