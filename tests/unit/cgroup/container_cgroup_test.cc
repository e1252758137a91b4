#include "lib/cgroup/container_cgroup.h"

#include <gtest/gtest.h>

namespace topologyd::cgroup {
namespace {

TEST(ContainerCgroupTest, CgroupfsAppendsTheIdToTheParentWithoutItsLeadingSlash) {
  EXPECT_EQ(*ContainerCgroup("/kubepods/burstable/pod1234", "abc", CgroupDriver::kCgroupfs,
                             Runtime::kContainerd),
            "kubepods/burstable/pod1234/abc");
  // A kubelet --cgroup-root is simply part of the parent.
  EXPECT_EQ(*ContainerCgroup("/node/kubepods/pod1", "abc", CgroupDriver::kCgroupfs, Runtime::kCrio),
            "node/kubepods/pod1/crio-abc");
}

TEST(ContainerCgroupTest, SystemdExpandsTheSliceAndAppendsTheRuntimesScope) {
  EXPECT_EQ(*ContainerCgroup("kubepods-burstable-pod12_34.slice", "abc", CgroupDriver::kSystemd,
                             Runtime::kContainerd),
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice/"
            "cri-containerd-abc.scope");
  EXPECT_EQ(*ContainerCgroup("/kubepods.slice/kubepods-pod1.slice", "abc", CgroupDriver::kSystemd,
                             Runtime::kCrio),
            "kubepods.slice/kubepods-pod1.slice/crio-abc.scope");
}

TEST(ContainerCgroupTest, RefusesWhatCannotBeAContainerCgroup) {
  EXPECT_EQ(
      ContainerCgroup("", "abc", CgroupDriver::kCgroupfs, Runtime::kContainerd).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      ContainerCgroup("/kubepods/pod1", "../x", CgroupDriver::kCgroupfs, Runtime::kContainerd)
          .ok());
  EXPECT_FALSE(
      ContainerCgroup("/kubepods/../etc", "abc", CgroupDriver::kCgroupfs, Runtime::kContainerd)
          .ok());
  absl::StatusOr<std::string> not_a_slice =
      ContainerCgroup("/kubepods/pod1", "abc", CgroupDriver::kSystemd, Runtime::kContainerd);
  ASSERT_FALSE(not_a_slice.ok());
  EXPECT_NE(not_a_slice.status().message().find("slice"), std::string_view::npos);
  EXPECT_FALSE(
      ContainerCgroup("a--b.slice", "abc", CgroupDriver::kSystemd, Runtime::kContainerd).ok());
}

TEST(ContainerCgroupTest, ThePodCgroupIsTheContainersWithoutItsLeaf) {
  EXPECT_EQ(*PodCgroup("/kubepods/burstable/pod1234/", CgroupDriver::kCgroupfs),
            "kubepods/burstable/pod1234");
  EXPECT_EQ(*PodCgroup("kubepods-burstable-pod12_34.slice", CgroupDriver::kSystemd),
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice");
  EXPECT_EQ(PodCgroup("", CgroupDriver::kCgroupfs).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PodCgroup("/", CgroupDriver::kCgroupfs).status().code(),
            absl::StatusCode::kInvalidArgument);
  // systemd's root slice is the hierarchy's root, whose quota is no pod's.
  EXPECT_EQ(PodCgroup("-.slice", CgroupDriver::kSystemd).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(PodCgroup("/kubepods/../etc", CgroupDriver::kCgroupfs).ok());
}

}  // namespace
}  // namespace topologyd::cgroup
