#include "lib/shim/admission_plan.h"

#include <gtest/gtest.h>

#include "tests/support/pod_builder.h"

namespace topologyd::shim {
namespace {

pod::Pod ThreeContainerPod() { return ::topologyd::testing::InitSidecarAndTwoApps(); }

TEST(NeedsPlacementTest, GuaranteedPodsAndDeviceRequestsNeedTopologyd) {
  EXPECT_TRUE(NeedsPlacement(ThreeContainerPod(), "app"));

  pod::Pod burstable = ThreeContainerPod();
  burstable.containers[0].limits.erase("memory");
  EXPECT_FALSE(NeedsPlacement(burstable, "app"));

  burstable.containers[1].requests["example.com/nic"] = *pod::Quantity::Parse("1");
  burstable.containers[1].limits["example.com/nic"] = *pod::Quantity::Parse("1");
  EXPECT_TRUE(NeedsPlacement(burstable, "app2"));
  EXPECT_FALSE(NeedsPlacement(burstable, "app"));
}

TEST(RefusalStatusTest, OutOfResourcesIsExhaustedAndTheRestAPreconditionWithKubeletsReason) {
  absl::Status out = RefusalStatus("OutOfcpu", "not enough CPUs");
  EXPECT_EQ(out.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(out.message(), "topologyd: OutOfcpu: not enough CPUs");
  absl::Status topology = RefusalStatus("TopologyAffinityError", "no NUMA node fits");
  EXPECT_EQ(topology.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(topology.message(), "topologyd: TopologyAffinityError: no NUMA node fits");
}

}  // namespace
}  // namespace topologyd::shim
