// topologyd-shim end to end: a private containerd, a real topologyd on this host's cgroup v1
// cpuset hierarchy, and the shim between them; a kubelet emulator talks to the shim. After each
// step the container's process, its cgroup and the runtime's stored resources must show the
// CPUs topologyd's ListAllocations reports, and an exclusive container and its pod cgroup the
// CFS quota kubelet's static policy gives them. Skips as the containerd harness does.
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
#include "tests/integration/immutable_directory.h"
#include "tests/integration/process.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/node/node_stack.h"
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;
namespace v1 = ::topologyd::v1;
using std::chrono::seconds;

#define ASSERT_GRPC_OK(expr)                                        \
  do {                                                              \
    const grpc::Status grpc_status_ = (expr);                       \
    ASSERT_TRUE(grpc_status_.ok()) << grpc_status_.error_message(); \
  } while (false)

pod::Quantity Q(const char* text) { return *pod::Quantity::Parse(text); }

pod::Container Guaranteed(const char* name, const char* cpu, const char* memory) {
  return {name, false, {}, {{"cpu", Q(cpu)}, {"memory", Q(memory)}}};
}

pod::Container Burstable(const char* name, const char* cpu) {
  return {name, false, {{"cpu", Q(cpu)}}, {}};
}

pod::Container BurstableWithLimit(const char* name, const char* request, const char* limit) {
  return {name, false, {{"cpu", Q(request)}}, {{"cpu", Q(limit)}}};
}

pod::Pod OnePod(const std::string& uid, std::vector<pod::Container> containers) {
  pod::Pod pod;
  pod.uid = uid;
  pod.namespace_name = "default";
  pod.name = "pod-" + uid;
  pod.containers = std::move(containers);
  return pod;
}

std::string Str(const absl::StatusOr<std::string>& value) {
  return value.ok() ? *value : "<" + value.status().ToString() + ">";
}

class ShimE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string reason = ContainerdSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
    auto socket = containerd_.Start();
    ASSERT_TRUE(socket.ok()) << socket.status();
    containerd_socket_ = *socket;
    NodeStackOptions options;
    options.topologyd_policy =
        "cpuManagerPolicy: static\n"
        "reservedSystemCPUs: \"0\"\n"
        "topologyManagerPolicy: best-effort\n"
        "topologyManagerScope: " +
        scope_ + "\nmemoryManagerPolicy: None\n" + feature_gates_;
    options.shim_config = "failurePolicy: " + failure_policy_ + "\npodSpec: {sources: " + sources_ +
                          "}\nresync: {period: 1s}\ntopologydTimeout: 3s\n";
    stack_ = std::make_unique<NodeStack>(dir_.path(), containerd_socket_, options);
    ASSERT_NO_FATAL_FAILURE(StartTopologyd());
    ASSERT_NO_FATAL_FAILURE(StartShim());
    kubelet_ =
        std::make_unique<KubeletEmulator>(EmulatorOptions{.endpoint = "unix://" + ShimSocket(),
                                                          .fallback_endpoint = containerd_socket_,
                                                          .image = containerd_.image_id()});
  }

  void TearDown() override {
    if (kubelet_ != nullptr) {
      EXPECT_TRUE(kubelet_->Cleanup().ok());
    }
    if (HasFailure() && stack_ != nullptr) std::cout << stack_->Logs();
  }

  std::string TopologydSocket() const { return stack_->topologyd_socket(); }
  std::string ShimSocket() const { return stack_->shim_socket(); }

  void StartTopologyd() {
    absl::Status started = stack_->StartTopologyd();
    ASSERT_TRUE(started.ok()) << started;
  }
  void StopTopologyd() { stack_->StopTopologyd(SIGTERM); }
  void StartShim() {
    absl::Status started = stack_->StartShim();
    ASSERT_TRUE(started.ok()) << started;
  }

  grpc::Status Allocations(v1::ListAllocationsResponse* response) {
    return stack_->Allocations(response);
  }
  std::optional<v1::ContainerAllocation> Allocation(const std::string& uid,
                                                    const std::string& name) {
    return stack_->Allocation(uid, name);
  }
  std::string SharedPool() { return stack_->SharedPool(); }

  // "allowed=X cgroup=Y stored=Z" for container `id`: the kernel's and the runtime's view.
  std::string Placement(const std::string& id) {
    pid_t pid = 0;
    grpc::Status status = kubelet_->ContainerPid(id, &pid);
    if (!status.ok()) return "<pid: " + status.error_message() + ">";
    auto dir = CgroupDir(pid, "cpuset");
    cri::LinuxContainerResources stored;
    status = kubelet_->StoredResources(id, &stored);
    return "allowed=" + Str(CpusAllowedList(pid)) +
           " cgroup=" + (dir.ok() ? Str(ReadCgroupValue(*dir, "cpuset.cpus")) : Str(dir.status())) +
           " stored=" + (status.ok() ? stored.cpuset_cpus() : "<" + status.error_message() + ">");
  }

  static std::string Expected(const std::string& cpus) {
    return "allowed=" + cpus + " cgroup=" + cpus + " stored=" + cpus;
  }

  // Runs `pod` and its container "app", which must come to run on `cpus`; `id` is its id.
  void RunApp(const pod::Pod& pod, const std::string& cpus, std::string* id) {
    ASSERT_GRPC_OK(kubelet_->RunPod(pod));
    ASSERT_GRPC_OK(kubelet_->RunContainer(pod.uid, "app", 0, id));
    ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation(pod.uid, "app", *id, cpus));
  }

  // The CFS quota of pod `uid`'s cgroup in the cpu hierarchy, as kubelet created it (the
  // emulator) and the shim may have lifted it.
  std::string PodQuota(const std::string& uid) {
    absl::StatusOr<std::string> mount = V1MountPoint("cpu");
    if (!mount.ok()) return Str(mount.status());
    return Str(ReadCgroupValue(*mount + kubelet_->CgroupParent(uid), "cpu.cfs_quota_us"));
  }

  // "container=Q pod=P stored=S" for container `id`: the CFS quota of its cgroup, of its pod
  // cgroup (the container cgroup's parent under the cgroupfs driver) and the runtime's.
  std::string Quotas(const std::string& id) {
    pid_t pid = 0;
    grpc::Status status = kubelet_->ContainerPid(id, &pid);
    if (!status.ok()) return "<pid: " + status.error_message() + ">";
    absl::StatusOr<std::string> dir = CgroupDir(pid, "cpu");
    if (!dir.ok()) return Str(dir.status());
    cri::LinuxContainerResources stored;
    status = kubelet_->StoredResources(id, &stored);
    return "container=" + Str(ReadCgroupValue(*dir, "cpu.cfs_quota_us")) + " pod=" +
           Str(ReadCgroupValue(std::filesystem::path(*dir).parent_path(), "cpu.cfs_quota_us")) +
           " stored=" +
           (status.ok() ? std::to_string(stored.cpu_quota()) : "<" + status.error_message() + ">");
  }

  // Container `id`, topologyd's container `name` of pod `uid`, runs where topologyd put it: its
  // process, its cgroup and the runtime's stored resources show the allocation's CPUs, and the
  // allocation is bound to `id`. Polls, for the effects topologyd and the shim push later.
  void ExpectOnAllocation(const std::string& uid, const std::string& name, const std::string& id,
                          const std::string& cpus) {
    std::string placement;
    std::optional<v1::ContainerAllocation> allocation;
    bool settled = PollUntil([&] {
      allocation = Allocation(uid, name);
      placement = Placement(id);
      return allocation && allocation->cpus() == cpus && allocation->container_id() == id &&
             placement == Expected(cpus);
    });
    ASSERT_TRUE(allocation.has_value()) << uid << "/" << name << " not held";
    EXPECT_EQ(allocation->cpus(), cpus) << uid << "/" << name;
    EXPECT_EQ(allocation->container_id(), id) << uid << "/" << name;
    EXPECT_EQ(placement, Expected(cpus)) << uid << "/" << name;
    EXPECT_TRUE(settled);
  }

  std::string sources_ = "[estimate]";
  std::string failure_policy_ = "Fail";
  std::string scope_ = "container";
  std::string feature_gates_;      // topologyd's featureGates line, if any
  ContainerdInstance containerd_;  // outlives everything that uses it
  std::string containerd_socket_;
  TempDir dir_;
  std::unique_ptr<NodeStack> stack_;
  std::unique_ptr<KubeletEmulator> kubelet_;
};

// 1. Exclusive CPU for a Guaranteed container; the shared pool shrinks for everyone else, also
// for a container that ran before, through the runtime, and later updates keep it.
TEST_F(ShimE2ETest, GuaranteedContainerGetsAnExclusiveCpuAndTheSharedPoolShrinks) {
  ASSERT_EQ(SharedPool(), "0-1");
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("early", {Burstable("app", "100m")})));
  std::string early;
  ASSERT_GRPC_OK(kubelet_->RunContainer("early", "app", 0, &early));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("early", "app", early, "0-1"));

  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("g", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  EXPECT_TRUE(Allocation("g", "app")->exclusive());
  EXPECT_EQ(SharedPool(), "0");
  // The earlier shared container: topologyd writes its cgroup, the shim tells the runtime.
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("early", "app", early, "0"));

  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("be", {{"app", false, {}, {}}})));
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
TEST_F(ShimE2ETest, ARestartKeepsTheCpusAndOnlyThePodsRemovalFreesThem) {
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("r", {Guaranteed("app", "1", "64Mi")})));
  std::string first;
  ASSERT_GRPC_OK(kubelet_->RunContainer("r", "app", 0, &first));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("r", "app", first, "1"));

  ASSERT_GRPC_OK(kubelet_->StopContainer(first));
  ASSERT_GRPC_OK(kubelet_->WaitForState(first, cri::CONTAINER_EXITED, seconds(30)));
  std::string second;
  ASSERT_GRPC_OK(kubelet_->RunContainer("r", "app", 1, &second));
  ASSERT_NE(second, first);
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("r", "app", second, "1"));
  // Placed from the shim's copy of topologyd's decision, without its CFS quota as before.
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

// 3. A pod that does not fit fails CreateContainer with topologyd's reason.
TEST_F(ShimE2ETest, APodThatDoesNotFitIsRefusedWithTopologydsReason) {
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("first", {Guaranteed("app", "1", "64Mi")})));
  std::string first;
  ASSERT_GRPC_OK(kubelet_->RunContainer("first", "app", 0, &first));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("first", "app", first, "1"));

  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("second", {Guaranteed("app", "1", "64Mi")})));
  std::string second;
  grpc::Status status = kubelet_->CreateContainer("second", "app", 0, &second);
  EXPECT_THAT(status.error_code(), ::testing::AnyOf(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                                    grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_THAT(status.error_message(), ::testing::StartsWith("topologyd: "));
  EXPECT_FALSE(Allocation("second", "app").has_value());
  std::vector<cri::Container> containers;
  cri::ContainerFilter in_pod;
  in_pod.set_pod_sandbox_id(kubelet_->SandboxId("second"));
  ASSERT_GRPC_OK(kubelet_->ListContainers(in_pod, &containers));
  EXPECT_TRUE(containers.empty());
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("first", "app", first, "1"));
}

// The pod spec from the topologyd.io/resources annotation: init containers and sidecars are
// known, so the pod is admitted whole at RunPodSandbox, as kubelet admits it.
class ShimE2EAnnotationTest : public ShimE2ETest {
 protected:
  ShimE2EAnnotationTest() { sources_ = "[annotation, estimate]"; }
};

// 4. An init container, a sidecar and an app container, placed as kubelet's static policy
// places them: the app container reuses the init container's exclusive CPU, the sidecar (not a
// whole CPU) runs on the shared pool.
TEST_F(ShimE2EAnnotationTest, InitContainerSidecarAndAppFromTheAnnotation) {
  pod::Pod pod = OnePod("a", {Guaranteed("app", "1", "64Mi")});
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
  cri::LinuxContainerResources stored;
  ASSERT_GRPC_OK(kubelet_->StoredResources(setup, &stored));
  EXPECT_EQ(stored.cpuset_cpus(), "1");
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

// Admitted at RunPodSandbox, a pod with an exclusive container has its pod cgroup's quota
// lifted and its sandbox's resources forwarded without one before anything runs.
TEST_F(ShimE2EAnnotationTest, ASandboxWithAnExclusiveContainerRunsWithoutACfsQuota) {
  pod::Pod pod = OnePod("s", {Guaranteed("app", "1", "64Mi")});
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
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("f", {Guaranteed("app", "500m", "64Mi")})));
  std::string fractional;
  ASSERT_GRPC_OK(kubelet_->RunContainer("f", "app", 0, &fractional));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("f", "app", fractional, "0-1"));
  EXPECT_FALSE(Allocation("f", "app")->exclusive());
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("g", {Guaranteed("app", "1", "64Mi")})));
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("f", "app", fractional, "0"));
}

// kubelet's static policy (DisableCPUQuotaWithExclusiveCPUs, on by default) runs a container
// with exclusive CPUs, and its pod cgroup, without a CFS quota; the shared pool keeps kubelet's.
TEST_F(ShimE2ETest, AnExclusiveContainerAndItsPodCgroupRunWithoutACfsQuota) {
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("q", {Guaranteed("app", "1", "64Mi")})));
  // kubelet, its managers off, created the pod cgroup with the quota of the pod's limit.
  ASSERT_EQ(PodQuota("q"), "100000");
  std::string pinned;
  ASSERT_GRPC_OK(kubelet_->RunContainer("q", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("q", "app", pinned, "1"));
  EXPECT_TRUE(Allocation("q", "app")->cpu_quota_unlimited());
  EXPECT_EQ(Quotas(pinned), "container=-1 pod=-1 stored=-1");

  std::string burstable;
  ASSERT_NO_FATAL_FAILURE(
      RunApp(OnePod("b", {BurstableWithLimit("app", "100m", "500m")}), "0", &burstable));
  EXPECT_FALSE(Allocation("b", "app")->cpu_quota_unlimited());
  EXPECT_EQ(Quotas(burstable), "container=50000 pod=50000 stored=50000");

  std::string fractional;
  ASSERT_NO_FATAL_FAILURE(
      RunApp(OnePod("f", {Guaranteed("app", "500m", "64Mi")}), "0", &fractional));
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
  ASSERT_NO_FATAL_FAILURE(RunApp(OnePod("q", {Guaranteed("app", "1", "64Mi")}), "1", &pinned));
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
      OnePod("two", {Guaranteed("big", "1", "64Mi"), Guaranteed("small", "500m", "32Mi")})));
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
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("down", {Guaranteed("app", "1", "64Mi")})));
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
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("disk", {Guaranteed("app", "1", "64Mi")})));
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

// With failurePolicy Ignore, a shared-pool container is created while topologyd is down, unpinned;
// the resync after topologyd is back adopts it: admitted, bound, and following the shared pool.
class ShimE2EIgnoreTest : public ShimE2ETest {
 protected:
  ShimE2EIgnoreTest() { failure_policy_ = "Ignore"; }
};

TEST_F(ShimE2EIgnoreTest, AContainerCreatedWhileTopologydWasDownIsAdoptedWhenItIsBack) {
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("late", {Burstable("app", "100m")})));
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("g", {Guaranteed("app", "1", "64Mi")})));
  ASSERT_NO_FATAL_FAILURE(StopTopologyd());
  std::string late;
  ASSERT_GRPC_OK(kubelet_->RunContainer("late", "app", 0, &late));
  cri::LinuxContainerResources stored;
  ASSERT_GRPC_OK(kubelet_->StoredResources(late, &stored));
  EXPECT_EQ(stored.cpuset_cpus(), "") << "created unchanged";
  // A container that needs placement is still refused.
  std::string pinned;
  grpc::Status refused = kubelet_->CreateContainer("g", "app", 0, &pinned);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();

  ASSERT_NO_FATAL_FAILURE(StartTopologyd());
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("late", "app", late, "0-1"));
  ASSERT_GRPC_OK(kubelet_->RunContainer("g", "app", 0, &pinned));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("g", "app", pinned, "1"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("late", "app", late, "0"));
}

// 6. The shim killed between CreateContainer and StartContainer, and again after the start:
// the restarted shim binds the container; nothing is lost or held twice.
TEST_F(ShimE2ETest, AKilledShimLosesNothing) {
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("k", {Guaranteed("app", "1", "64Mi")})));
  std::string id;
  ASSERT_GRPC_OK(kubelet_->CreateContainer("k", "app", 0, &id));
  stack_->StopShim(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartShim());
  ASSERT_GRPC_OK(kubelet_->StartContainer(id));
  ASSERT_NO_FATAL_FAILURE(ExpectOnAllocation("k", "app", id, "1"));

  stack_->StopShim(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartShim());
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("k2", {Burstable("app", "100m")})));
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
  ASSERT_GRPC_OK(kubelet_->RunPod(OnePod("p", {Burstable("app", "100m")})));
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
  image_status.mutable_image()->set_image(containerd_.image_id());
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
