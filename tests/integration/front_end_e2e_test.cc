// The scenarios both front ends must pass alike, each run through the relay (topologyd-shim on
// containerd 1.6) and through the NRI plugin (topologyd-nri on containerd 2.x): after each
// step the container's process, its cgroup and the runtime's record show the CPUs topologyd
// reports, the CFS quotas are kubelet's static policy's, and the same pods get the same CPUs
// whichever front end asked.
// front_end_stack.h says what runs; shim_e2e_test.cc and nri_e2e_test.cc hold what only one
// front end does.
#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "lib/pod/pod.h"
#include "lib/rpc/pod_proto.h"
#include "tests/integration/front_end_stack.h"
#include "tests/support/grpc_assert.h"
#include "tests/support/pod_builder.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;
namespace v1 = ::topologyd::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;

class FrontEndE2ETest : public ::testing::TestWithParam<FrontEnd>, public FrontEndStack {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartNode(GetParam())); }
  void TearDown() override { StopNode(HasFailure()); }
};

INSTANTIATE_TEST_SUITE_P(Both, FrontEndE2ETest, ::testing::Values(FrontEnd::kRelay, FrontEnd::kNri),
                         FrontEndName);

// 1. Exclusive CPU for a Guaranteed container, without the CFS quota kubelet sent; the shared
// pool shrinks for everyone else, also for a container that ran before, through the runtime,
// and kubelet's later updates keep it.
TEST_P(FrontEndE2ETest, GuaranteedContainerGetsAnExclusiveCpuAndTheSharedPoolShrinks) {
  ASSERT_EQ(SharedPool(), "0-1");
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("early", {Burstable("app", "100m")})));
  std::string early;
  ASSERT_GRPC_OK(kubelet_->RunContainer("early", "app", 0, &early));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("early", "app", early, "0-1"));

  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("g", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  EXPECT_TRUE(Allocation("g", "app")->exclusive());
  EXPECT_EQ(Quotas(pinned), "container=-1 pod=-1 stored=-1");
  EXPECT_EQ(SharedPool(), "0");
  // The earlier shared container: topologyd writes its cgroup, the front end tells the runtime.
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("early", "app", early, "0"));

  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("be", {{"app", false, {}, {}}})));
  std::string best_effort;
  ASSERT_GRPC_OK(kubelet_->RunContainer("be", "app", 0, &best_effort));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("be", "app", best_effort, "0"));

  // kubelet's updates do not undo topologyd's cpuset: one without a cpuset, and the CPU
  // manager's with every CPU.
  cri::LinuxContainerResources shares_only;
  shares_only.set_cpu_shares(512);
  ASSERT_GRPC_OK(kubelet_->UpdateResources(early, shares_only));
  EXPECT_EQ(Placement(early), Expected("0"));
  ASSERT_GRPC_OK(kubelet_->UpdateCpuset(early, "0-1"));
  EXPECT_EQ(Placement(early), Expected("0"));
  ASSERT_GRPC_OK(kubelet_->UpdateCpuset(pinned, "0-1"));
  EXPECT_EQ(Placement(pinned), Expected("1"));
}

// 2. A restarted container (new id) keeps its CPUs; kubelet's removal of the old instance
// releases nothing; removing the pod frees the CPU.
TEST_P(FrontEndE2ETest, ARestartKeepsTheCpusAndOnlyThePodsRemovalFreesThem) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("r", {Guaranteed("app", "1", "64Mi")})));
  std::string first;
  ASSERT_GRPC_OK(kubelet_->RunContainer("r", "app", 0, &first));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("r", "app", first, "1"));

  ASSERT_GRPC_OK(kubelet_->StopContainer(first));
  ASSERT_GRPC_OK(kubelet_->WaitForState(first, cri::CONTAINER_EXITED, seconds(30)));
  std::string second;
  ASSERT_GRPC_OK(kubelet_->RunContainer("r", "app", 1, &second));
  ASSERT_NE(second, first);
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("r", "app", second, "1"));
  // Placed from the front end's copy of topologyd's decision, without its CFS quota as before,
  // and its pod cgroup without one, as kubelet's static policy runs them.
  EXPECT_EQ(Quotas(second), "container=-1 pod=-1 stored=-1");

  // kubelet's garbage collection of the old instance while the new one runs.
  ASSERT_GRPC_OK(kubelet_->RemoveContainer(first));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("r", "app", second, "1"));
  EXPECT_EQ(SharedPool(), "0");

  ASSERT_GRPC_OK(kubelet_->StopPod("r"));
  ASSERT_GRPC_OK(kubelet_->RemovePod("r"));
  v1::ListAllocationsResponse response;
  EXPECT_TRUE(PollUntil([&] { return Allocations(&response).ok() && response.pods().empty(); }))
      << response.DebugString();
  EXPECT_EQ(SharedPool(), "0-1");
}

// 3. A pod that does not fit fails container creation with topologyd's reason; nothing of it
// is created or held.
TEST_P(FrontEndE2ETest, APodThatDoesNotFitIsRefusedWithTopologydsReason) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("first", {Guaranteed("app", "1", "64Mi")})));
  std::string first;
  ASSERT_GRPC_OK(kubelet_->RunContainer("first", "app", 0, &first));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("first", "app", first, "1"));

  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("second", {Guaranteed("app", "1", "64Mi")})));
  std::string second;
  grpc::Status status = kubelet_->CreateContainer("second", "app", 0, &second);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.error_message(), HasSubstr("topologyd: "));
  if (GetParam() == FrontEnd::kRelay) {
    // The relay answers kubelet itself, with the code kubelet's own refusals carry.
    EXPECT_THAT(status.error_code(), ::testing::AnyOf(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                                      grpc::StatusCode::FAILED_PRECONDITION));
  }
  EXPECT_FALSE(Allocation("second", "app").has_value());
  std::vector<cri::Container> containers;
  cri::ContainerFilter in_pod;
  in_pod.set_pod_sandbox_id(kubelet_->SandboxId("second"));
  ASSERT_GRPC_OK(kubelet_->ListContainers(in_pod, &containers));
  EXPECT_TRUE(containers.empty());
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("first", "app", first, "1"));
}

// The pod spec from the topologyd.io/resources annotation: init containers and sidecars are
// known, so the pod is admitted whole with its sandbox, as kubelet admits it.
class FrontEndAnnotationTest : public FrontEndE2ETest {
 protected:
  FrontEndAnnotationTest() { sources_ = "[annotation, estimate]"; }
};

INSTANTIATE_TEST_SUITE_P(Both, FrontEndAnnotationTest,
                         ::testing::Values(FrontEnd::kRelay, FrontEnd::kNri), FrontEndName);

// 4. An init container, a sidecar and an app container, placed as kubelet's static policy
// places them and as the daemon decides the same Pod: the app container reuses the init
// container's exclusive CPU, the sidecar (not a whole CPU) runs on the shared pool.
TEST_P(FrontEndAnnotationTest, InitContainerSidecarAndAppFromTheAnnotation) {
  pod::Pod pod = Pod("a", {Guaranteed("app", "1", "64Mi")});
  pod.init_containers = {Guaranteed("setup", "1", "64Mi"), Guaranteed("proxy", "100m", "32Mi")};
  pod.init_containers[1].restart_always = true;
  pod.annotations["topologyd.io/resources"] = R"({
    "initContainers": [
      {"name": "setup", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}},
      {"name": "proxy", "restartPolicy": "Always",
       "resources": {"limits": {"cpu": "100m", "memory": "32Mi"}}}
    ],
    "containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}]
  })";
  // The daemon's own decision for the same pod, before anything is held.
  v1::ExplainRequest explain;
  pod::Pod spec = pod;
  pod::ApplyRequestDefaults(spec);
  rpc::PodToProto(spec, explain.mutable_pod());
  v1::ExplainResponse explained;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(stack_->topologyd().Explain(&context, explain, &explained));
  }
  ASSERT_TRUE(explained.decision().admitted()) << explained.DebugString();

  ASSERT_GRPC_OK(kubelet_->RunPod(pod));
  // Admitted with the sandbox: every container is held before any is created, exactly as the
  // daemon decides the same Pod.
  v1::ListAllocationsResponse response;
  ASSERT_GRPC_OK(Allocations(&response));
  ASSERT_EQ(response.pods_size(), 1) << response.DebugString();
  ASSERT_EQ(response.pods(0).containers_size(), 3) << response.DebugString();
  for (const v1::ContainerAllocation& decided : explained.decision().containers()) {
    auto held = Allocation("a", decided.name());
    ASSERT_TRUE(held.has_value()) << decided.name();
    EXPECT_EQ(held->exclusive(), decided.exclusive()) << decided.name();
    if (decided.exclusive()) {
      EXPECT_EQ(held->cpus(), decided.cpus()) << decided.name();
    }
    EXPECT_EQ(std::vector<int>(held->numa_affinity().begin(), held->numa_affinity().end()),
              std::vector<int>(decided.numa_affinity().begin(), decided.numa_affinity().end()))
        << decided.name();
  }

  std::string setup;
  ASSERT_GRPC_OK(kubelet_->RunContainer("a", "setup", 0, &setup));
  ASSERT_GRPC_OK(kubelet_->WaitForState(setup, cri::CONTAINER_EXITED, seconds(30)));
  EXPECT_EQ(StoredCpus(setup), "1");
  auto setup_allocation = Allocation("a", "setup");
  ASSERT_TRUE(setup_allocation.has_value());
  EXPECT_EQ(setup_allocation->cpus(), "1");
  EXPECT_TRUE(setup_allocation->exclusive());

  std::string proxy;
  ASSERT_GRPC_OK(kubelet_->RunContainer("a", "proxy", 0, &proxy));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("a", "proxy", proxy, "0"));
  EXPECT_FALSE(Allocation("a", "proxy")->exclusive());
  std::string app;
  ASSERT_GRPC_OK(kubelet_->RunContainer("a", "app", 0, &app));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("a", "app", app, "1"));
  EXPECT_TRUE(Allocation("a", "app")->exclusive());
  EXPECT_EQ(SharedPool(), "0");
}

// With failurePolicy Ignore, a shared-pool container is created while topologyd is down,
// unpinned; once topologyd is back it is adopted (the relay's resync, the plugin's reconnected
// allocation stream): admitted, bound, and following the shared pool.
class FrontEndIgnoreTest : public FrontEndE2ETest {
 protected:
  FrontEndIgnoreTest() { failure_policy_ = "Ignore"; }
};

INSTANTIATE_TEST_SUITE_P(Both, FrontEndIgnoreTest,
                         ::testing::Values(FrontEnd::kRelay, FrontEnd::kNri), FrontEndName);

// 5.
TEST_P(FrontEndIgnoreTest, AContainerCreatedWhileTopologydWasDownIsAdoptedWhenItIsBack) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("late", {Burstable("app", "100m")})));
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("g", {Guaranteed("app", "1", "64Mi")})));
  ASSERT_NO_FATAL_FAILURE(StopTopologyd());
  std::string late;
  ASSERT_GRPC_OK(kubelet_->RunContainer("late", "app", 0, &late));
  EXPECT_EQ(StoredCpus(late), "") << "created unchanged";
  // A container that needs placement is still refused.
  std::string pinned;
  grpc::Status refused = kubelet_->CreateContainer("g", "app", 0, &pinned);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.error_message(), HasSubstr("is not created until topologyd places it"));

  ASSERT_NO_FATAL_FAILURE(StartTopologyd());
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("late", "app", late, "0-1"));
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("late", "app", late, "0"));
}

}  // namespace
}  // namespace topologyd::testing::containerd
