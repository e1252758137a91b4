// topoctl containers' judgement of a cpuset read from the runtime or a cgroup against
// topologyd's decision (tools/topoctl/support_cpuset_check.h).
#include "gtest/gtest.h"

#include "tools/topoctl/support_cpuset_check.h"

namespace topoctl {
namespace {

TEST(CompareCpusetTest, ListsCompareAsSets) {
  EXPECT_EQ(CompareCpuset("0-3", {}, {.cpus = "0,1,2,3"}, "runtime"), "agrees");
  EXPECT_EQ(CompareCpuset("2-3,8", {}, {.cpus = "8,2-3\n"}, "cgroup"), "agrees");
  EXPECT_EQ(CompareCpuset("", {}, {.cpus = ""}, "cgroup"), "agrees");
}

TEST(CompareCpusetTest, DifferencesNameTheSourceAndWhatItHolds) {
  EXPECT_EQ(CompareCpuset("4-5", {}, {.cpus = "0-3"}, "runtime"), "differs: runtime 0-3");
  EXPECT_EQ(CompareCpuset("4-5", {}, {.cpus = ""}, "cgroup"), "differs: cgroup none");
}

TEST(CompareCpusetTest, MemoryNodesCountOnlyWhenTopologydPlacesMemory) {
  // Without the Static Memory Manager topologyd sets no cpuset.mems: whatever is there agrees.
  EXPECT_EQ(CompareCpuset("1", {}, {.cpus = "1", .mems = "0-1"}, "cgroup"), "agrees");
  EXPECT_EQ(CompareCpuset("1", {0, 1}, {.cpus = "1", .mems = "0-1"}, "cgroup"), "agrees");
  EXPECT_EQ(CompareCpuset("1", {1}, {.cpus = "1", .mems = "0"}, "runtime"),
            "differs: runtime mems 0");
  EXPECT_EQ(CompareCpuset("1", {1}, {.cpus = "2", .mems = ""}, "runtime"),
            "differs: runtime 2, mems none");
}

TEST(CompareCpusetTest, UnreadableOrMalformedIsUnknown) {
  EXPECT_EQ(CompareCpuset("1", {}, {.unknown = "runtime: container \"x\" not found"}, "runtime"),
            "unknown: runtime: container \"x\" not found");
  EXPECT_EQ(CompareCpuset("1", {}, {.cpus = "zero"}, "cgroup"),
            "unknown: the cgroup CPU list \"zero\" does not parse");
  EXPECT_EQ(CompareCpuset("1", {0}, {.cpus = "1", .mems = "a"}, "cgroup"),
            "unknown: the cgroup memory-node list \"a\" does not parse");
}

}  // namespace
}  // namespace topoctl
