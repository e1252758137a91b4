#include "lib/shim/admission_plan.h"

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

pod::Container MakeContainer(std::string name, std::string cpu, std::string memory,
                             bool sidecar = false) {
  pod::Container c;
  c.name = std::move(name);
  c.restart_always = sidecar;
  if (!cpu.empty()) {
    c.requests["cpu"] = *pod::Quantity::Parse(cpu);
    c.limits["cpu"] = *pod::Quantity::Parse(cpu);
  }
  if (!memory.empty()) {
    c.requests["memory"] = *pod::Quantity::Parse(memory);
    c.limits["memory"] = *pod::Quantity::Parse(memory);
  }
  return c;
}

pod::Pod ThreeContainerPod() {
  pod::Pod p;
  p.uid = "u1";
  p.namespace_name = "ns";
  p.name = "p";
  p.init_containers = {MakeContainer("init", "1", "64Mi"),
                       MakeContainer("side", "1", "64Mi", /*sidecar=*/true)};
  p.containers = {MakeContainer("app", "2", "64Mi"), MakeContainer("app2", "1", "64Mi")};
  return p;
}

std::vector<std::string> Names(const pod::Pod& p) {
  std::vector<std::string> names;
  for (const auto& c : p.init_containers) names.push_back(c.name);
  for (const auto& c : p.containers) names.push_back(c.name);
  return names;
}

TEST(PodToAdmitTest, APodTopologydDoesNotKnowIsAdmittedWhole) {
  absl::StatusOr<pod::Pod> request = PodToAdmit(ThreeContainerPod(), {}, "init");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(*request, ThreeContainerPod());
}

TEST(PodToAdmitTest, AKnownPodIsSentWithWhatItHoldsPlusTheNewContainerInSpecOrder) {
  // The init container finished and was released; the app container restarts.
  absl::StatusOr<pod::Pod> request = PodToAdmit(ThreeContainerPod(), {"side", "app2"}, "app");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(Names(*request), (std::vector<std::string>{"side", "app", "app2"}));
  EXPECT_TRUE(request->init_containers[0].restart_always);
}

TEST(PodToAdmitTest, AContainerMissingFromTheSpecIsNotFound) {
  EXPECT_EQ(PodToAdmit(ThreeContainerPod(), {}, "debugger").status().code(),
            absl::StatusCode::kNotFound);
}

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
