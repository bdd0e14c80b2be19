#include "base/writable.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rdmacheck {
namespace {

TEST(Writable, ANewFileInAWritableDirectoryIsFineAndNotLeftBehind) {
  const auto dir = test_util::make_temp_dir("writable");
  const auto file = dir / "report.json";
  EXPECT_EQ(writable_file_problem(file.string()), "");
  EXPECT_FALSE(std::filesystem::exists(file));  // the probe removed what it created
}

TEST(Writable, AnExistingFileIsOpenedNotTruncated) {
  const auto dir = test_util::make_temp_dir("writable");
  const auto file = dir / "old.json";
  std::ofstream(file) << "keep";
  EXPECT_EQ(writable_file_problem(file.string()), "");
  EXPECT_EQ(std::filesystem::file_size(file), 4u);
}

TEST(Writable, MissingDirectoryAndDirectoriesAreNamed) {
  const auto dir = test_util::make_temp_dir("writable");
  EXPECT_EQ(writable_file_problem((dir / "no/such.json").string()),
            "directory '" + (dir / "no").string() + "' does not exist");
  EXPECT_EQ(writable_file_problem(dir.string()), "'" + dir.string() + "' is a directory");
  EXPECT_EQ(writable_file_problem(dir.string() + "/"),
            "'" + dir.string() + "/' names a directory, not a file");
}

// /proc takes no new files, even from root, whose access(W_OK) says yes to
// every directory: the probe tries, so the refusal comes before the run.
TEST(Writable, ProcRefusesNewFilesEvenToRoot) {
  const std::string why = writable_file_problem("/proc/rdmacheck-report.json");
  EXPECT_EQ(why.rfind("cannot create a file in directory '/proc': ", 0), 0u) << why;
}

TEST(Writable, AReadOnlyFileIsRefusedUnlessRootBypassesTheMode) {
  const auto dir = test_util::make_temp_dir("writable");
  const auto file = dir / "ro.json";
  std::ofstream(file) << "x";
  ::chmod(file.c_str(), 0444);
  const std::string why = writable_file_problem(file.string());
  if (::geteuid() == 0) {
    EXPECT_EQ(why, "");  // CAP_DAC_OVERRIDE: root writes it, as the report would
  } else {
    EXPECT_EQ(why, "cannot write '" + file.string() + "': Permission denied");
  }
}

TEST(Writable, ADeviceIsLeftToTheWrite) { EXPECT_EQ(writable_file_problem("/dev/null"), ""); }

}  // namespace
}  // namespace rdmacheck
