// What only the NRI plugin does, end to end (front_end_stack.h: topologyd-nri registered on a
// private containerd 2.x, a real topologyd): a plugin restart and a containerd restart
// resynchronise through NRI's Synchronize, with nothing lost and nothing held twice. The
// scenarios both front ends share are front_end_e2e_test.cc. Skips as the containerd harness
// does, and without containerd 2.x or the plugin unless TOPOLOGYD_REQUIRE_COMPONENTS=1.
#include <signal.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/pod/pod.h"
#include "tests/integration/front_end_stack.h"
#include "tests/support/grpc_assert.h"
#include "tests/support/pod_builder.h"

namespace topologyd::testing::containerd {
namespace {

class NriE2ETest : public ::testing::Test, public FrontEndStack {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartNode(FrontEnd::kNri)); }
  void TearDown() override { StopNode(HasFailure()); }

  // Every pod topologyd holds, with its containers' names: nothing may be held twice.
  std::map<std::string, std::vector<std::string>> Held() {
    v1::ListAllocationsResponse response;
    std::map<std::string, std::vector<std::string>> held;
    if (!Allocations(&response).ok()) return held;
    for (const auto& pod : response.pods()) {
      for (const auto& c : pod.containers()) held[pod.uid()].push_back(c.name());
    }
    return held;
  }
};

// A plugin killed and started again: a container created while it was away (containerd
// creates it unchanged) is adopted and pinned, a pod removed meanwhile is released, and
// nothing is lost or held twice.
TEST_F(NriE2ETest, APluginRestartResynchronisesWithNothingLostOrHeldTwice) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("k", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("k", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", pinned, "1"));
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("gone", {Burstable("app", "100m")})));
  std::string gone;
  ASSERT_GRPC_OK(kubelet_->RunContainer("gone", "app", 0, &gone));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("gone", "app", gone, "0"));

  StopFrontEnd(SIGKILL);
  ASSERT_GRPC_OK(kubelet_->StopPod("gone"));
  ASSERT_GRPC_OK(kubelet_->RemovePod("gone"));
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("late", {Burstable("app", "100m")})));
  std::string late;
  ASSERT_GRPC_OK(kubelet_->RunContainer("late", "app", 0, &late));
  EXPECT_EQ(StoredCpus(late), "") << "created without the plugin";

  ASSERT_NO_FATAL_FAILURE(StartFrontEnd());
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("late", "app", late, "0"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", pinned, "1"));
  EXPECT_TRUE(PollUntil([&] { return !Held().contains("gone"); })) << "released at Synchronize";
  std::map<std::string, std::vector<std::string>> held = Held();
  EXPECT_EQ(held.size(), 2u);
  EXPECT_EQ(held["k"], std::vector<std::string>{"app"});
  EXPECT_EQ(held["late"], std::vector<std::string>{"app"});
}

// containerd restarted under running containers: the plugin registers again, the runtime
// synchronises it, every container keeps its CPUs and new pods are placed as before.
TEST_F(NriE2ETest, AContainerdRestartResynchronisesWithNothingLostOrHeldTwice) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("k", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("k", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", pinned, "1"));

  ASSERT_EQ(stack_->NriRegistrations(), 1);
  absl::Status restarted = containerd_->Restart();
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_TRUE(PollUntil([&] { return stack_->NriRegistrations() == 2; })) << stack_->Logs();

  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("s", {Burstable("app", "100m")})));
  std::string shared;
  ASSERT_GRPC_OK(kubelet_->RunContainer("s", "app", 0, &shared));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("s", "app", shared, "0"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", pinned, "1"));
  std::map<std::string, std::vector<std::string>> held = Held();
  EXPECT_EQ(held.size(), 2u);
  EXPECT_EQ(held["k"], std::vector<std::string>{"app"});
  EXPECT_EQ(held["s"], std::vector<std::string>{"app"});
}

}  // namespace
}  // namespace topologyd::testing::containerd
