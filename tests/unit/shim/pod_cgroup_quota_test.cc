// PodCgroupQuota on fake cgroup trees: the pod cgroup's CFS quota lifted in the cpu hierarchy
// of either version, nothing written outside it, a missing pod cgroup reported as such.
#include "shim/pod_cgroup_quota.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "lib/cgroup/container_cgroup.h"
#include "tests/unit/cgroup/fake_cgroupfs.h"

namespace topologyd::shim {
namespace {

using cgroup::CgroupVersion;
using cgroup::CgroupVersionSetting;
using cgroup::testing::MakeDirs;
using cgroup::testing::ReadText;
using cgroup::testing::TempDir;
using cgroup::testing::WriteText;

constexpr std::string_view kPod = "kubepods/podu1";

// kubelet's v1 tree: systemd's cpu,cpuacct mount, "cpu" linked to it, the pod cgroup created
// with the quota of 2 CPUs.
void MakeV1Tree(const std::string& root) {
  const std::string cpu = root + "/cpu,cpuacct";
  MakeDirs(cpu + "/" + std::string(kPod));
  WriteText(cpu + "/cpu.cfs_quota_us", "-1\n");
  WriteText(cpu + "/" + std::string(kPod) + "/cpu.cfs_quota_us", "200000\n");
  WriteText(cpu + "/" + std::string(kPod) + "/cpu.cfs_period_us", "100000\n");
  ASSERT_EQ(::symlink("cpu,cpuacct", (root + "/cpu").c_str()), 0);
  MakeDirs(root + "/cpuset/" + std::string(kPod));
}

std::unique_ptr<PodCgroupQuota> MustOpen(const std::string& root, CgroupVersionSetting version) {
  absl::StatusOr<std::unique_ptr<PodCgroupQuota>> quota = PodCgroupQuota::Open(root, version);
  EXPECT_TRUE(quota.ok()) << quota.status();
  return quota.ok() ? *std::move(quota) : nullptr;
}

TEST(PodCgroupQuotaTest, V1WritesMinusOneIntoThePodsCfsQuota) {
  TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeV1Tree(tmp.path()));
  std::unique_ptr<PodCgroupQuota> quota = MustOpen(tmp.path(), CgroupVersionSetting::kAuto);
  ASSERT_NE(quota, nullptr);
  EXPECT_EQ(quota->version(), CgroupVersion::kV1);
  EXPECT_EQ(quota->path(), tmp.path() + "/cpu,cpuacct");
  // The pod cgroup as the shim finds it: from the sandbox's cgroup parent.
  absl::StatusOr<std::string> pod =
      cgroup::PodCgroup("/kubepods/podu1", cgroup::CgroupDriver::kCgroupfs);
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(quota->Lift(*pod).ok());
  const std::string dir = tmp.path() + "/cpu,cpuacct/" + std::string(kPod);
  EXPECT_EQ(ReadText(dir + "/cpu.cfs_quota_us"), "-1");
  EXPECT_EQ(ReadText(dir + "/cpu.cfs_period_us"), "100000\n");
}

TEST(PodCgroupQuotaTest, V2WritesMaxAndKeepsThePeriod) {
  TempDir tmp;
  WriteText(tmp.path() + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  const std::string pod = "kubepods.slice/kubepods-podu1.slice";
  MakeDirs(tmp.path() + "/" + pod);
  WriteText(tmp.path() + "/" + pod + "/cpu.max", "200000 50000\n");
  std::unique_ptr<PodCgroupQuota> quota = MustOpen(tmp.path(), CgroupVersionSetting::kV2);
  ASSERT_NE(quota, nullptr);
  EXPECT_EQ(quota->version(), CgroupVersion::kV2);
  ASSERT_EQ(*cgroup::PodCgroup("kubepods-podu1.slice", cgroup::CgroupDriver::kSystemd), pod);
  ASSERT_TRUE(quota->Lift(pod).ok());
  EXPECT_EQ(ReadText(tmp.path() + "/" + pod + "/cpu.max"), "max 50000");
  // A file that is not cpu.max's format is left alone.
  WriteText(tmp.path() + "/" + pod + "/cpu.max", "garbage\n");
  EXPECT_EQ(quota->Lift(pod).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadText(tmp.path() + "/" + pod + "/cpu.max"), "garbage\n");
}

TEST(PodCgroupQuotaTest, AMissingPodCgroupIsNotFoundAndNothingIsCreated) {
  TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeV1Tree(tmp.path()));
  std::unique_ptr<PodCgroupQuota> quota = MustOpen(tmp.path(), CgroupVersionSetting::kV1);
  ASSERT_NE(quota, nullptr);
  EXPECT_EQ(quota->Lift("kubepods/podother").code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/cpu,cpuacct/kubepods/podother"));
}

TEST(PodCgroupQuotaTest, NothingIsWrittenOutsideTheHierarchy) {
  TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeV1Tree(tmp.path()));
  TempDir outside;
  WriteText(outside.path() + "/cpu.cfs_quota_us", "100000\n");
  // A pod cgroup that is a symlink out of the tree.
  ASSERT_EQ(
      ::symlink(outside.path().c_str(), (tmp.path() + "/cpu,cpuacct/kubepods/podlink").c_str()), 0);
  std::unique_ptr<PodCgroupQuota> quota = MustOpen(tmp.path(), CgroupVersionSetting::kAuto);
  ASSERT_NE(quota, nullptr);
  EXPECT_EQ(quota->Lift("kubepods/podlink").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(quota->Lift("kubepods/../../x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(quota->Lift("/kubepods/podu1").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadText(outside.path() + "/cpu.cfs_quota_us"), "100000\n");
}

TEST(PodCgroupQuotaTest, ARootWithoutACpuHierarchyDoesNotOpen) {
  TempDir tmp;
  MakeDirs(tmp.path() + "/cpuset");
  absl::StatusOr<std::unique_ptr<PodCgroupQuota>> quota =
      PodCgroupQuota::Open(tmp.path(), CgroupVersionSetting::kAuto);
  EXPECT_EQ(quota.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      PodCgroupQuota::Open(tmp.path() + "/missing", CgroupVersionSetting::kAuto).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace topologyd::shim
