// What only the relay does, end to end (front_end_stack.h: topologyd-shim between the kubelet
// emulator and a private containerd 1.6, a real topologyd): the pod cgroup's and the sandbox's
// CFS quota, pod scope, waiting for topologyd and for its checkpoint, a killed shim, and the
// calls it relays as bytes. The scenarios both front ends share are front_end_e2e_test.cc.
// Skips as the containerd harness does.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/pod/pod.h"
#include "lib/rpc/pod_proto.h"
#include "tests/integration/front_end_stack.h"
#include "tests/integration/immutable_directory.h"
#include "tests/integration/process.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/grpc_assert.h"
#include "tests/support/node/node_stack.h"
#include "tests/support/pod_builder.h"
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;
namespace v1 = ::topologyd::v1;
using std::chrono::seconds;

class ShimE2ETest : public ::testing::Test, public FrontEndStack {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartNode(FrontEnd::kRelay)); }
  void TearDown() override { StopNode(HasFailure()); }

  std::string ShimSocket() const { return stack_->shim_socket(); }
  void StartShim() { StartFrontEnd(); }

  // Runs `pod` and its container "app", which must come to run on `cpus`; `id` is its id.
  void RunApp(const pod::Pod& pod, const std::string& cpus, std::string* id) {
    ASSERT_GRPC_OK(kubelet_->RunPod(pod));
    ASSERT_GRPC_OK(kubelet_->RunContainer(pod.uid, "app", 0, id));
    ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation(pod.uid, "app", *id, cpus));
  }
};

// The pod spec from the topologyd.io/resources annotation: init containers and sidecars are
// known, so the pod is admitted whole at RunPodSandbox, as kubelet admits it.
class ShimE2EAnnotationTest : public ShimE2ETest {
 protected:
  ShimE2EAnnotationTest() { sources_ = "[annotation, estimate]"; }
};

// Admitted at RunPodSandbox, a pod with an exclusive container has its pod cgroup's quota
// lifted and its sandbox's resources forwarded without one before anything runs.
TEST_F(ShimE2EAnnotationTest, ASandboxWithAnExclusiveContainerRunsWithoutACfsQuota) {
  pod::Pod pod = Pod("s", {Guaranteed("app", "1", "64Mi")});
  pod.annotations["topologyd.io/resources"] =
      R"({"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}]})";
  ASSERT_GRPC_OK(kubelet_->RunPod(pod));
  EXPECT_EQ(PodQuota("s"), "-1");
  cri::PodSandboxStatusRequest request;
  request.set_pod_sandbox_id(kubelet_->SandboxId("s"));
  request.set_verbose(true);
  cri::PodSandboxStatusResponse status;
  ASSERT_GRPC_OK(
      kubelet_->runtime().PodSandboxStatus(kubelet_->NewContext().get(), request, &status));
  ASSERT_TRUE(status.info().contains("info"));
  const nlohmann::json info = nlohmann::json::parse(status.info().at("info"), nullptr, false);
  const nlohmann::json::json_pointer quota("/config/linux/resources/cpu_quota");
  ASSERT_TRUE(info.contains(quota)) << status.info().at("info");
  EXPECT_EQ(info[quota], -1);
  std::string app;
  ASSERT_GRPC_OK(kubelet_->RunContainer("s", "app", 0, &app));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("s", "app", app, "1"));
  EXPECT_EQ(Quotas(app), "container=-1 pod=-1 stored=-1");
}

// A Guaranteed container with a fraction of a CPU is not exclusive (kubelet's static policy):
// it runs on the shared pool and follows it when an exclusive container takes a CPU.
TEST_F(ShimE2ETest, AFractionalGuaranteedContainerRunsOnTheSharedPool) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("f", {Guaranteed("app", "500m", "64Mi")})));
  std::string fractional;
  ASSERT_GRPC_OK(kubelet_->RunContainer("f", "app", 0, &fractional));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("f", "app", fractional, "0-1"));
  EXPECT_FALSE(Allocation("f", "app")->exclusive());
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("g", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("f", "app", fractional, "0"));
}

// kubelet's static policy (DisableCPUQuotaWithExclusiveCPUs, on by default) runs a container
// with exclusive CPUs, and its pod cgroup, without a CFS quota; the shared pool keeps kubelet's.
TEST_F(ShimE2ETest, AnExclusiveContainerAndItsPodCgroupRunWithoutACfsQuota) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("q", {Guaranteed("app", "1", "64Mi")})));
  // kubelet, its managers off, created the pod cgroup with the quota of the pod's limit.
  ASSERT_EQ(PodQuota("q"), "100000");
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("q", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("q", "app", pinned, "1"));
  EXPECT_TRUE(Allocation("q", "app")->cpu_quota_unlimited());
  EXPECT_EQ(Quotas(pinned), "container=-1 pod=-1 stored=-1");

  std::string burstable;
  ASSERT_NO_FATAL_FAILURE(RunApp(Pod("b", {Burstable("app", "100m", "500m")}), "0", &burstable));
  EXPECT_FALSE(Allocation("b", "app")->cpu_quota_unlimited());
  EXPECT_EQ(Quotas(burstable), "container=50000 pod=50000 stored=50000");

  std::string fractional;
  ASSERT_NO_FATAL_FAILURE(RunApp(Pod("f", {Guaranteed("app", "500m", "64Mi")}), "0", &fractional));
  EXPECT_EQ(Quotas(fractional), "container=50000 pod=50000 stored=50000");
  // The exclusive one is left as it was.
  EXPECT_EQ(Quotas(pinned), "container=-1 pod=-1 stored=-1");
}

// With the gate off in topologyd's configuration, kubelet's quota stays everywhere.
class ShimE2EQuotaGateOffTest : public ShimE2ETest {
 protected:
  ShimE2EQuotaGateOffTest() {
    feature_gates_ = "featureGates: {DisableCPUQuotaWithExclusiveCPUs: false}\n";
  }
};

TEST_F(ShimE2EQuotaGateOffTest, AnExclusiveContainerKeepsKubeletsQuota) {
  std::string pinned;
  ASSERT_NO_FATAL_FAILURE(RunApp(Pod("q", {Guaranteed("app", "1", "64Mi")}), "1", &pinned));
  EXPECT_TRUE(Allocation("q", "app")->exclusive());
  EXPECT_FALSE(Allocation("q", "app")->cpu_quota_unlimited());
  EXPECT_EQ(Quotas(pinned), "container=100000 pod=100000 stored=100000");
}

// Pod scope: the two containers of a Guaranteed pod are admitted together, the whole-CPU one
// exclusive, the fractional one on the shared pool.
class ShimE2EPodScopeTest : public ShimE2ETest {
 protected:
  ShimE2EPodScopeTest() { scope_ = "pod"; }
};

TEST_F(ShimE2EPodScopeTest, TwoContainersOfAPodAreAdmittedTogether) {
  ASSERT_GRPC_OK(kubelet_->RunPod(
      Pod("two", {Guaranteed("big", "1", "64Mi"), Guaranteed("small", "500m", "32Mi")})));
  std::string big;
  ASSERT_GRPC_OK(kubelet_->RunContainer("two", "big", 0, &big));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("two", "big", big, "1"));
  std::string small;
  ASSERT_GRPC_OK(kubelet_->RunContainer("two", "small", 0, &small));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("two", "small", small, "0"));
  EXPECT_TRUE(Allocation("two", "big")->exclusive());
  EXPECT_FALSE(Allocation("two", "small")->exclusive());
  ASSERT_GRPC_OK(kubelet_->StopPod("two"));
  ASSERT_GRPC_OK(kubelet_->RemovePod("two"));
  EXPECT_EQ(SharedPool(), "0-1");
}

// 5. While topologyd is down a Guaranteed container is not created (never unpinned); once it
// is back, kubelet's retry succeeds and the CPU is held once.
TEST_F(ShimE2ETest, AContainerWaitsForTopologydAndItsRetrySucceeds) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("down", {Guaranteed("app", "1", "64Mi")})));
  ASSERT_NO_FATAL_FAILURE(StopTopologyd());
  std::string id;
  grpc::Status status = kubelet_->CreateContainer("down", "app", 0, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("topologyd"));
  std::vector<cri::Container> containers;
  ASSERT_GRPC_OK(kubelet_->ListContainers({}, &containers));
  EXPECT_TRUE(containers.empty());

  ASSERT_NO_FATAL_FAILURE(StartTopologyd());
  ASSERT_GRPC_OK(kubelet_->RunContainer("down", "app", 0, &id));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("down", "app", id, "1"));
  v1::ListAllocationsResponse response;
  ASSERT_GRPC_OK(Allocations(&response));
  ASSERT_EQ(response.pods_size(), 1) << response.DebugString();
  EXPECT_EQ(response.pods(0).containers_size(), 1) << response.DebugString();
  EXPECT_EQ(response.shared_pool(), "0");
}

// The shim creates the container while topologyd writes its decision, and answers kubelet
// only once the decision is on disk: when it cannot be written, the container is removed and
// kubelet's retry, once the disk is back, creates it on the same CPUs.
TEST_F(ShimE2ETest, AContainerWhosePlacementCannotBeWrittenIsRemovedAndItsRetrySucceeds) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("disk", {Guaranteed("app", "1", "64Mi")})));
  const std::string state_dir = dir_.File("state");
  ImmutableDirectory immutable(state_dir);
  if (!immutable.skip_reason().empty()) GTEST_SKIP() << immutable.skip_reason();
  std::string id;
  grpc::Status status = kubelet_->CreateContainer("disk", "app", 0, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("until topologyd has its placement "
                                                           "on disk"));
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("is not durable"));
  std::vector<cri::Container> containers;
  ASSERT_GRPC_OK(kubelet_->ListContainers({}, &containers));
  EXPECT_TRUE(containers.empty()) << "the runtime kept a container kubelet was told failed";

  immutable.MakeWritable();
  ASSERT_GRPC_OK(kubelet_->RunContainer("disk", "app", 0, &id));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("disk", "app", id, "1"));
  EXPECT_THAT(ReadFile(state_dir + "/state.json"), ::testing::HasSubstr("\"disk\""));
}

// 6. The shim killed between CreateContainer and StartContainer, and again after the start:
// the restarted shim binds the container; nothing is lost or held twice.
TEST_F(ShimE2ETest, AKilledShimLosesNothing) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("k", {Guaranteed("app", "1", "64Mi")})));
  std::string id;
  ASSERT_GRPC_OK(kubelet_->CreateContainer("k", "app", 0, &id));
  stack_->StopShim(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartShim());
  ASSERT_GRPC_OK(kubelet_->StartContainer(id));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", id, "1"));

  stack_->StopShim(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartShim());
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("k2", {Burstable("app", "100m")})));
  std::string shared;
  ASSERT_GRPC_OK(kubelet_->RunContainer("k2", "app", 0, &shared));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k2", "app", shared, "0"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", id, "1"));
  v1::ListAllocationsResponse response;
  ASSERT_GRPC_OK(Allocations(&response));
  EXPECT_EQ(response.pods_size(), 2) << response.DebugString();
  for (const auto& pod : response.pods()) EXPECT_EQ(pod.containers_size(), 1) << pod.uid();
}

// 7. Calls the shim does not intercept are relayed as bytes: the same request gives the same
// serialized response through the shim as from containerd directly.
TEST_F(ShimE2ETest, NonInterceptedCallsAreByteIdentical) {
  ASSERT_GRPC_OK(kubelet_->RunPod(Pod("p", {Burstable("app", "100m")})));
  std::string id;
  ASSERT_GRPC_OK(kubelet_->RunContainer("p", "app", 0, &id));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("p", "app", id, "0-1"));

  auto direct =
      grpc::CreateChannel("unix:" + containerd_socket_, grpc::InsecureChannelCredentials());
  auto relayed = grpc::CreateChannel("unix:" + ShimSocket(), grpc::InsecureChannelCredentials());
  auto call = [](const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                 const std::string& request) -> std::string {
    grpc::GenericStub generic(channel);
    grpc::Slice request_bytes(request);
    grpc::ByteBuffer request_buffer(&request_bytes, 1);
    grpc::ByteBuffer reply;
    grpc::CompletionQueue cq;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(30));
    auto rpc = generic.PrepareUnaryCall(&context, method, request_buffer, &cq);
    rpc->StartCall();
    grpc::Status status;
    rpc->Finish(&reply, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    cq.Next(&tag, &ok);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    if (!status.ok()) return "<" + status.error_message() + ">";
    std::vector<grpc::Slice> slices;
    if (!reply.Dump(&slices).ok()) return "<dump>";
    std::string bytes;
    for (const auto& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return bytes;
  };

  cri::ContainerStatusRequest container_status;
  container_status.set_container_id(id);
  cri::ContainerStatusRequest container_status_verbose = container_status;
  container_status_verbose.set_verbose(true);
  cri::PodSandboxStatusRequest sandbox_status;
  sandbox_status.set_pod_sandbox_id(kubelet_->SandboxId("p"));
  cri::ImageStatusRequest image_status;
  image_status.mutable_image()->set_image(containerd_->image_id());
  cri::ListContainersRequest list_containers;
  list_containers.mutable_filter()->set_pod_sandbox_id(kubelet_->SandboxId("p"));
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"/runtime.v1.RuntimeService/Version", cri::VersionRequest().SerializeAsString()},
      {"/runtime.v1.RuntimeService/Status", cri::StatusRequest().SerializeAsString()},
      {"/runtime.v1.RuntimeService/ListContainers",
       cri::ListContainersRequest().SerializeAsString()},
      {"/runtime.v1.RuntimeService/ListContainers", list_containers.SerializeAsString()},
      {"/runtime.v1.RuntimeService/ContainerStatus", container_status.SerializeAsString()},
      {"/runtime.v1.RuntimeService/ContainerStatus", container_status_verbose.SerializeAsString()},
      {"/runtime.v1.RuntimeService/ListPodSandbox",
       cri::ListPodSandboxRequest().SerializeAsString()},
      {"/runtime.v1.RuntimeService/PodSandboxStatus", sandbox_status.SerializeAsString()},
      {"/runtime.v1.ImageService/ImageStatus", image_status.SerializeAsString()},
      {"/runtime.v1.ImageService/ListImages", ""},  // an empty ListImagesRequest
  };
  for (const auto& [method, request] : calls) {
    // containerd (Go) writes map entries (labels, annotations) in random order, so two direct
    // calls may differ, and match or not by chance. Responses without maps (Version, Status,
    // ImageStatus) must be byte-identical; those with maps must hold the same bytes in an
    // order containerd itself produces, checked as the same multiset of bytes.
    const std::string first = call(direct, method, request);
    const std::string through_shim = call(relayed, method, request);
    EXPECT_FALSE(first.starts_with("<")) << method << ": " << first;
    const bool has_maps = method.find("Version") == std::string::npos &&
                          method.find("/Status") == std::string::npos &&
                          method.find("ImageStatus") == std::string::npos;
    if (!has_maps || through_shim == first) {
      EXPECT_EQ(through_shim, first) << method;
    } else {
      std::string sorted_first = first;
      std::string sorted_shim = through_shim;
      std::sort(sorted_first.begin(), sorted_first.end());
      std::sort(sorted_shim.begin(), sorted_shim.end());
      EXPECT_EQ(sorted_shim, sorted_first) << method;
    }
  }
}

}  // namespace
}  // namespace topologyd::testing::containerd
