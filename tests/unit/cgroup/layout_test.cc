#include "lib/cgroup/layout.h"

#include <unistd.h>

#include "gtest/gtest.h"

#include "tests/unit/cgroup/fake_cgroupfs.h"

namespace topologyd::cgroup {
namespace {

using testing::MakeDirs;
using testing::MakeV1Cgroup;
using testing::MakeV2Cgroup;
using testing::TempDir;
using testing::WriteText;

using Detector = absl::StatusOr<CgroupLayout> (*)(const CgroupRoot&, CgroupVersionSetting);

// The cpuset hierarchy's layout, or with `detect` another controller's.
absl::StatusOr<CgroupLayout> Detect(const std::string& path,
                                    CgroupVersionSetting setting = CgroupVersionSetting::kAuto,
                                    Detector detect = DetectCgroupLayout) {
  absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(path);
  if (!root.ok()) return root.status();
  return detect(*root, setting);
}

absl::StatusOr<CgroupLayout> DetectCpu(const std::string& path,
                                       CgroupVersionSetting setting = CgroupVersionSetting::kAuto) {
  return Detect(path, setting, DetectCpuLayout);
}

TEST(DetectCgroupLayoutTest, UnifiedV2) {
  TempDir tmp;
  MakeV2Cgroup(tmp.path(), "", "", "cpuset cpu memory", false);
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV2);
  EXPECT_EQ(layout->hierarchy, "");
  EXPECT_FALSE(layout->hybrid);
  EXPECT_EQ(*DetectCgroupVersion(tmp.path()), CgroupVersion::kV2);
  EXPECT_EQ(Detect(tmp.path(), CgroupVersionSetting::kV1).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(DetectCgroupLayoutTest, UnifiedV2WithoutCpusetIsAnOperatorProblem) {
  TempDir tmp;
  MakeDirs(tmp.path());
  WriteText(tmp.path() + "/cgroup.controllers", "cpu io memory pids\n");
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(layout.status().message()).find("cpuset"), std::string::npos);
}

TEST(DetectCgroupLayoutTest, V1RootIsTheCpusetMount) {
  TempDir tmp;
  MakeV1Cgroup(tmp.path(), "0-7", "0");
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "");
  EXPECT_EQ(Detect(tmp.path(), CgroupVersionSetting::kV2).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(DetectCgroupLayoutTest, V1ControllersUnderATmpfs) {
  TempDir tmp;
  MakeV1Cgroup(tmp.path() + "/cpuset", "0-7", "0");
  MakeDirs(tmp.path() + "/memory");
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path(), CgroupVersionSetting::kV1);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "cpuset");
  EXPECT_FALSE(layout->hybrid);
}

TEST(DetectCgroupLayoutTest, HybridWithCpusetOnTheV1Side) {
  TempDir tmp;
  MakeV1Cgroup(tmp.path() + "/cpuset", "0-7", "0");
  MakeDirs(tmp.path() + "/unified");
  WriteText(tmp.path() + "/unified/cgroup.controllers", "");  // v1 holds every controller
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "cpuset");
  EXPECT_TRUE(layout->hybrid);
}

TEST(DetectCgroupLayoutTest, HybridWithCpusetBoundToTheUnifiedMount) {
  TempDir tmp;
  MakeDirs(tmp.path() + "/memory");
  MakeV2Cgroup(tmp.path() + "/unified", "", "", "cpuset", false);
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV2);
  EXPECT_EQ(layout->hierarchy, "unified");
  EXPECT_TRUE(layout->hybrid);
}

TEST(DetectCgroupLayoutTest, EmptyTreeSaysWhatWasLookedFor) {
  TempDir tmp;
  absl::StatusOr<CgroupLayout> layout = Detect(tmp.path());
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(layout.status().message()).find("cpuset.cpus"), std::string::npos);
}

TEST(DetectCgroupLayoutTest, SymlinkedHierarchyIsRefused) {
  TempDir tmp;
  MakeV1Cgroup(tmp.path() + "/elsewhere", "0-7", "0");
  ASSERT_EQ(::symlink((tmp.path() + "/elsewhere").c_str(), (tmp.path() + "/cpuset").c_str()), 0);
  EXPECT_EQ(Detect(tmp.path()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DetectCpuLayoutTest, UnifiedV2MustListCpu) {
  TempDir tmp;
  MakeV2Cgroup(tmp.path(), "", "", "cpuset cpu memory", false);
  EXPECT_EQ(DetectCpu(tmp.path())->version, CgroupVersion::kV2);
  EXPECT_EQ(DetectCpu(tmp.path(), CgroupVersionSetting::kV2)->hierarchy, "");
  WriteText(tmp.path() + "/cgroup.controllers", "cpuset memory\n");
  EXPECT_EQ(DetectCpu(tmp.path()).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(DetectCpu(tmp.path()).status().message()).find("does not list cpu:"),
            std::string::npos);
}

TEST(DetectCpuLayoutTest, SystemdsCoMountIsFoundBeforeItsSymlink) {
  TempDir tmp;
  MakeDirs(tmp.path() + "/cpu,cpuacct/kubepods");
  WriteText(tmp.path() + "/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  WriteText(tmp.path() + "/cpu,cpuacct/kubepods/cpu.cfs_quota_us", "200000\n");
  ASSERT_EQ(::symlink("cpu,cpuacct", (tmp.path() + "/cpu").c_str()), 0);
  ASSERT_EQ(::symlink("cpu,cpuacct", (tmp.path() + "/cpuacct").c_str()), 0);
  MakeV1Cgroup(tmp.path() + "/cpuset", "0-7", "0");
  absl::StatusOr<CgroupLayout> layout = DetectCpu(tmp.path());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "cpu,cpuacct");
  absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(tmp.path());
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<CgroupRoot> cpu = OpenHierarchy(*root, *layout);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(*cpu->ReadFile("kubepods", "cpu.cfs_quota_us"), "200000\n");
  // The cpuset hierarchy beside it is still the cpuset's.
  EXPECT_EQ(Detect(tmp.path())->hierarchy, "cpuset");
}

TEST(DetectCpuLayoutTest, AMountOfItsOwnAndTheRootAsTheMount) {
  TempDir tmp;
  MakeDirs(tmp.path() + "/cpu");
  WriteText(tmp.path() + "/cpu/cpu.cfs_quota_us", "-1\n");
  absl::StatusOr<CgroupLayout> layout = DetectCpu(tmp.path(), CgroupVersionSetting::kV1);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->hierarchy, "cpu");
  EXPECT_EQ(DetectCpu(tmp.path(), CgroupVersionSetting::kV2).status().code(),
            absl::StatusCode::kFailedPrecondition);
  layout = DetectCpu(tmp.path() + "/cpu");
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "");
}

TEST(DetectCpuLayoutTest, ASymlinkOutOfTheTreeIsRefusedAndAnEmptyTreeSaysWhatWasLookedFor) {
  TempDir tmp;
  absl::StatusOr<CgroupLayout> none = DetectCpu(tmp.path());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(none.status().message()).find("cpu,cpuacct/cpu.cfs_quota_us"),
            std::string::npos)
      << none.status();
  TempDir elsewhere;
  WriteText(elsewhere.path() + "/cpu.cfs_quota_us", "-1\n");
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), (tmp.path() + "/cpu").c_str()), 0);
  EXPECT_EQ(DetectCpu(tmp.path()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpenMountTest, TakesOneComponentOfMountNameBytes) {
  TempDir tmp;
  MakeDirs(tmp.path() + "/name=systemd");
  MakeDirs(tmp.path() + "/a/b");
  absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(tmp.path());
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_TRUE(root->OpenMount("name=systemd").ok());
  EXPECT_EQ(root->OpenMount("missing").status().code(), absl::StatusCode::kNotFound);
  for (std::string_view bad : {"", ".", "..", "a/b", "../x", "a\n"}) {
    EXPECT_EQ(root->OpenMount(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  WriteText(tmp.path() + "/file", "");
  EXPECT_EQ(root->OpenMount("file").status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace topologyd::cgroup
