#include "perf/placement.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

TEST(Placement, CpulistRangesAndSingles) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpulist(""), std::nullopt);
  EXPECT_EQ(parse_cpulist("3-1"), std::nullopt);
  EXPECT_EQ(parse_cpulist("a-b"), std::nullopt);
}

TEST(Placement, SoftwareDeviceHasNoNodeAndIsNotPinned) {
  // The rxe capture has no device/numa_node: the thread stays where it is.
  const Placement p = place(FsRoot(RDMACHECK_FIXTURES "/rxe-lab-h1"), "rxe0", -1);
  EXPECT_EQ(p.cpu, -1);
  EXPECT_EQ(p.numa_node, -1);
  EXPECT_NE(p.note.find("NUMA node is unknown"), std::string::npos) << p.note;
}

}  // namespace
}  // namespace rdmacheck::perf
