// A real kubelet (v1.34, built by tools/build-kube.sh) with a real topologyd on this host's
// cgroup v1 cpuset hierarchy and either front end: topologyd-shim relaying to a private
// containerd 1.6, or topologyd-nri registered on a private containerd 2.x with NRI (the
// KubeletBothFrontEndsTest cases run on both). kubelet runs standalone on static pods with its
// own managers off, as docs/shim.md and docs/nri.md deploy it. Every check reads the running
// process (/proc/PID/status), its cgroup and kubelet's own view of the pod (its read-only /pods
// endpoint) against what topologyd's ListAllocations reports.
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/cpuset/cpuset.h"
#include "tests/integration/front_end_stack.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/node/node_stack.h"
#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"

namespace topologyd::testing {
namespace {

namespace cri = runtime::v1;
using containerd::CgroupDir;
using containerd::ContainerdInstance;
using containerd::CpusAllowedList;
using containerd::FrontEnd;
using containerd::ReadCgroupValue;
using kube::KubeletProcess;
using kube::KubeletSkipReason;
using std::chrono::seconds;

// kubelet names a static pod "<name>-<node name>"; KubeletProcess runs as node topologyd-e2e.
std::string StaticPodName(const std::string& name) { return name + "-topologyd-e2e"; }

struct ContainerSpec {
  std::string name;
  // The container's resources as YAML flow, e.g. "{limits: {cpu: '1', memory: 64Mi}}".
  std::string resources = "{}";
  std::string command = "sleep 3600";
  enum Kind { kApp, kInit, kSidecar } kind = kApp;
};

// A static pod manifest with a fixed uid (kubelet keeps a manifest's uid), host networking, the
// locally imported image and a short grace period (sleep as PID 1 ignores SIGTERM).
std::string Manifest(const std::string& name, const std::string& uid,
                     const std::vector<ContainerSpec>& containers,
                     const std::string& annotations = "") {
  std::string init;
  std::string app;
  for (const ContainerSpec& c : containers) {
    std::string text = "  - name: " + c.name +
                       "\n"
                       "    image: " +
                       ContainerdInstance::kImage +
                       "\n"
                       "    imagePullPolicy: Never\n"
                       "    command: [\"sh\", \"-c\", \"" +
                       c.command + "\"]\n    resources: " + c.resources + "\n";
    if (c.kind == ContainerSpec::kSidecar) text += "    restartPolicy: Always\n";
    (c.kind == ContainerSpec::kApp ? app : init) += text;
  }
  std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                     "\n  namespace: default\n  uid: " + uid + "\n";
  if (!annotations.empty()) yaml += "  annotations:\n" + annotations;
  yaml +=
      "spec:\n"
      "  hostNetwork: true\n"
      "  terminationGracePeriodSeconds: 1\n";
  if (!init.empty()) yaml += "  initContainers:\n" + init;
  return yaml + "  containers:\n" + app;
}

const char* kOneCpu = "{limits: {cpu: '1', memory: 64Mi}}";
const char* kBurstable = "{requests: {cpu: 100m}}";

// The status kubelet reports for container `name` of static pod `pod`, once it is running
// with a restart count of at least `restarts`; fails the test after kNodePatience.
struct Running {
  std::string id;  // the runtime's container id
  int restarts = 0;
};
Running WaitForRunningOn(const KubeletProcess& kubelet, const std::string& pod,
                         const std::string& name, int restarts = 0) {
  Running found;
  std::string last = "no status yet";
  bool ok = PollUntil([&] {
    auto view = kubelet.Pod("default", StaticPodName(pod));
    if (!view.ok()) {
      last = view.status().ToString();
      return false;
    }
    const nlohmann::json& status = (*view)["status"];
    for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
      for (const nlohmann::json& c : status.value(list, nlohmann::json::array())) {
        if (c.value("name", "") != name) continue;
        last = c.dump();
        if (!c.contains("state") || !c["state"].contains("running")) return false;
        const std::string id = c.value("containerID", "");
        found.id = id.substr(id.find("://") == std::string::npos ? 0 : id.find("://") + 3);
        found.restarts = c.value("restartCount", 0);
        return found.restarts >= restarts && !found.id.empty();
      }
    }
    return false;
  });
  EXPECT_TRUE(ok) << pod << "/" << name << " is not running: " << last;
  return found;
}

// "allowed=X cgroup=Y" for container `id`: the kernel's view of its process. `runtime` is a
// CRI client on the runtime itself.
std::string PlacementOf(containerd::KubeletEmulator& runtime, const std::string& id) {
  pid_t pid = 0;
  grpc::Status status = runtime.ContainerPid(id, &pid);
  if (!status.ok()) return "<pid: " + status.error_message() + ">";
  auto dir = CgroupDir(pid, "cpuset");
  auto allowed = CpusAllowedList(pid);
  auto cgroup = dir.ok() ? ReadCgroupValue(*dir, "cpuset.cpus") : dir.status();
  return "allowed=" + (allowed.ok() ? *allowed : allowed.status().ToString()) +
         " cgroup=" + (cgroup.ok() ? *cgroup : cgroup.status().ToString());
}

// "container=X pod=Y": cpu.cfs_quota_us of container `id`'s cgroup and of its pod cgroup
// (the cgroup's parent, which kubelet made), as the kernel shows them.
std::string CfsQuotaOf(containerd::KubeletEmulator& runtime, const std::string& id) {
  pid_t pid = 0;
  grpc::Status status = runtime.ContainerPid(id, &pid);
  if (!status.ok()) return "<pid: " + status.error_message() + ">";
  auto dir = CgroupDir(pid, "cpu");
  if (!dir.ok()) return dir.status().ToString();
  auto container = ReadCgroupValue(*dir, "cpu.cfs_quota_us");
  auto pod = ReadCgroupValue(std::filesystem::path(*dir).parent_path(), "cpu.cfs_quota_us");
  return "container=" + (container.ok() ? *container : container.status().ToString()) +
         " pod=" + (pod.ok() ? *pod : pod.status().ToString());
}

class KubeletE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string reason = containerd::FrontEndSkipReason(front_end_); !reason.empty()) {
      SKIP_OR_FAIL() << reason;
    }
    if (std::string reason = KubeletSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
    containerd_ = std::make_unique<ContainerdInstance>(containerd::RuntimeFor(front_end_));
    auto socket = containerd_->Start();
    ASSERT_TRUE(socket.ok()) << socket.status();
    stack_ = std::make_unique<NodeStack>(dir_.path(), *socket, stack_options_);
    absl::Status stack =
        front_end_ == FrontEnd::kRelay ? stack_->Start() : stack_->StartTopologyd();
    if (stack.ok() && front_end_ == FrontEnd::kNri)
      stack = stack_->StartNri(containerd_->nri_socket());
    ASSERT_TRUE(stack.ok()) << stack;
    // A CRI client on containerd itself, for the runtime's view of a container.
    runtime_ = std::make_unique<containerd::KubeletEmulator>(
        containerd::EmulatorOptions{.endpoint = *socket, .image = containerd_->image_id()});
    const std::string endpoint =
        front_end_ == FrontEnd::kRelay ? stack_->shim_endpoint() : "unix://" + *socket;
    absl::Status started = kubelet_.Start(dir_.File("kubelet"), {.runtime_endpoint = endpoint});
    ASSERT_TRUE(started.ok()) << started;
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cout << (stack_ ? stack_->Logs() : "") << "--- kubelet log (last 20000 bytes)\n"
                << Tail(kubelet_.log(), 20000);
    }
    kubelet_.Stop(SIGKILL);
    // A kubelet killed in the middle of a call can leave a sandbox that containerd is still
    // setting up or tearing down, whose removal fails for a moment: try a few times.
    absl::Status removed;
    for (int attempt = 0; containerd_ != nullptr && attempt < 5 && containerd_->running();
         ++attempt) {
      removed = containerd_->RemoveAllPods();
      if (removed.ok()) break;
      std::this_thread::sleep_for(seconds(1));
    }
    EXPECT_TRUE(removed.ok()) << removed;
  }

  static std::string Tail(const std::string& text, size_t bytes) {
    return text.size() <= bytes ? text : text.substr(text.size() - bytes);
  }

  Running WaitForRunning(const std::string& pod, const std::string& name, int restarts = 0) {
    return WaitForRunningOn(kubelet_, pod, name, restarts);
  }
  std::string Placement(const std::string& id) { return PlacementOf(*runtime_, id); }
  std::string CfsQuota(const std::string& id) { return CfsQuotaOf(*runtime_, id); }

  // Container `id` (kubelet's container `name` of pod `uid`) runs where topologyd put it: its
  // process and its cgroup show `cpus`, and topologyd's allocation has `cpus` bound to `id`.
  // Polls, for what topologyd and the shim push later.
  void ExpectPinned(const std::string& uid, const std::string& name, const std::string& id,
                    const std::string& cpus) {
    std::string placement;
    std::optional<v1::ContainerAllocation> allocation;
    const std::string expected = "allowed=" + cpus + " cgroup=" + cpus;
    bool settled = PollUntil([&] {
      allocation = stack_->Allocation(uid, name);
      placement = Placement(id);
      return allocation && allocation->cpus() == cpus && allocation->container_id() == id &&
             placement == expected;
    });
    ASSERT_TRUE(allocation.has_value()) << uid << "/" << name << " not held";
    EXPECT_EQ(allocation->cpus(), cpus) << uid << "/" << name;
    EXPECT_EQ(allocation->container_id(), id) << uid << "/" << name;
    EXPECT_EQ(placement, expected) << uid << "/" << name;
    EXPECT_TRUE(settled);
  }

  // Nothing is held twice: every (pod, container) once, no exclusive CPU in two pods (within a
  // pod an app container may reuse a finished init container's CPUs, as in kubelet), and
  // topologyd holds exactly the pods in `uids`.
  void ExpectHeldOnce(const std::set<std::string>& uids) {
    v1::ListAllocationsResponse response;
    ASSERT_TRUE(stack_->Allocations(&response).ok());
    std::set<std::string> held_uids;
    std::set<std::string> seen;
    std::map<int, std::string> exclusive_owner;
    for (const auto& pod : response.pods()) {
      EXPECT_TRUE(held_uids.insert(pod.uid()).second) << "pod " << pod.uid() << " twice";
      for (const auto& c : pod.containers()) {
        EXPECT_TRUE(seen.insert(pod.uid() + "/" + c.name()).second) << pod.uid() << "/" << c.name();
        if (!c.exclusive()) continue;
        auto cpus = CpuSet::Parse(c.cpus());
        ASSERT_TRUE(cpus.ok());
        for (int cpu : cpus->ToVector()) {
          auto [it, fresh] = exclusive_owner.emplace(cpu, pod.uid());
          EXPECT_TRUE(fresh || it->second == pod.uid())
              << "CPU " << cpu << " held by pods " << it->second << " and " << pod.uid();
        }
      }
    }
    EXPECT_EQ(held_uids, uids) << response.DebugString();
  }

  // The kubelet shim, or the NRI plugin (set by a fixture's constructor).
  FrontEnd front_end_ = FrontEnd::kRelay;
  NodeStackOptions stack_options_;
  std::unique_ptr<ContainerdInstance> containerd_;  // outlives everything that uses it
  TempDir dir_{"tke"};
  std::unique_ptr<NodeStack> stack_;
  std::unique_ptr<containerd::KubeletEmulator> runtime_;
  KubeletProcess kubelet_;
};

// The cases both front ends must pass alike: the same static pods run on the same CPUs.
class KubeletBothFrontEndsTest : public KubeletE2ETest,
                                 public ::testing::WithParamInterface<FrontEnd> {
 protected:
  KubeletBothFrontEndsTest() { front_end_ = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Both, KubeletBothFrontEndsTest,
                         ::testing::Values(FrontEnd::kRelay, FrontEnd::kNri),
                         containerd::FrontEndName);

// A Guaranteed pod gets an exclusive CPU; Burstable and BestEffort pods run on the shared pool,
// which shrinks for a container that was running before the exclusive pod came.
TEST_P(KubeletBothFrontEndsTest, GuaranteedPodIsPinnedAndTheSharedPoolShrinksForRunningContainers) {
  ASSERT_EQ(stack_->SharedPool(), "0-1");
  ASSERT_TRUE(kubelet_
                  .WriteManifest("early", Manifest("early", "uid-early",
                                                   {{.name = "app", .resources = kBurstable}}))
                  .ok());
  Running early = WaitForRunning("early", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-early", "app", early.id, "0-1"));

  ASSERT_TRUE(
      kubelet_.WriteManifest("g", Manifest("g", "uid-g", {{.name = "app", .resources = kOneCpu}}))
          .ok());
  Running pinned = WaitForRunning("g", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-g", "app", pinned.id, "1"));
  EXPECT_TRUE(stack_->Allocation("uid-g", "app")->exclusive());
  EXPECT_EQ(stack_->SharedPool(), "0");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-early", "app", early.id, "0"));

  ASSERT_TRUE(kubelet_.WriteManifest("be", Manifest("be", "uid-be", {{.name = "app"}})).ok());
  Running best_effort = WaitForRunning("be", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-be", "app", best_effort.id, "0"));
  ExpectHeldOnce({"uid-early", "uid-g", "uid-be"});
}

// kubelet's static policy (DisableCPUQuotaWithExclusiveCPUs, on by default) runs a container
// with exclusive CPUs, and its pod cgroup, without a CFS quota. kubelet with its managers off
// sets the quota of the CPU limit on both; topologyd and the front end lift it. A Burstable
// container with a CPU limit keeps kubelet's quota.
TEST_P(KubeletBothFrontEndsTest, ExclusiveContainerAndItsPodRunWithoutCfsQuota) {
  ASSERT_TRUE(
      kubelet_.WriteManifest("q", Manifest("q", "uid-q", {{.name = "app", .resources = kOneCpu}}))
          .ok());
  ASSERT_TRUE(kubelet_
                  .WriteManifest("b", Manifest("b", "uid-b",
                                               {{.name = "app",
                                                 .resources = "{requests: {cpu: 100m}, "
                                                              "limits: {cpu: 500m}}"}}))
                  .ok());
  Running exclusive = WaitForRunning("q", "app");
  Running burstable = WaitForRunning("b", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-q", "app", exclusive.id, "1"));
  EXPECT_TRUE(stack_->Allocation("uid-q", "app")->cpu_quota_unlimited());
  EXPECT_EQ(CfsQuota(exclusive.id), "container=-1 pod=-1");
  EXPECT_EQ(CfsQuota(burstable.id), "container=50000 pod=50000");
}

// The same pods on kubelet's own static CPU manager (CPU 0 reserved, straight on a second
// private containerd) and through topologyd: every container runs on the same CPUs with the
// same CFS quota in its cgroup and its pod cgroup, as the kernel shows them. kubelet's own
// code is the reference here.
TEST_F(KubeletE2ETest, SameCpusAndQuotasAsKubeletsOwnStaticPolicy) {
  ContainerdInstance reference_runtime;
  auto socket = reference_runtime.Start();
  ASSERT_TRUE(socket.ok()) << socket.status();
  containerd::KubeletEmulator reference_cri(
      {.endpoint = *socket, .image = reference_runtime.image_id()});
  KubeletProcess reference;
  absl::Status started =
      reference.Start(dir_.File("reference"), {.runtime_endpoint = "unix://" + *socket,
                                               .cpu_manager_policy = "static",
                                               .reserved_system_cpus = "0"});
  absl::Cleanup stop_reference = [&] {
    reference.Stop(SIGKILL);
    EXPECT_TRUE(reference_runtime.RemoveAllPods().ok());
  };
  ASSERT_TRUE(started.ok()) << started;

  // The reference kubelet's node allocatable is one CPU (CPU 0 reserved), and its admission
  // refuses pods whose CPU requests exceed it: these ask one CPU in all.
  const std::vector<std::pair<std::string, std::string>> pods = {
      {"limited", "{requests: {cpu: '0'}, limits: {cpu: 500m}}"},
      {"exclusive", kOneCpu},
      {"besteffort", "{}"},
  };
  std::map<std::string, std::string> ours;
  std::map<std::string, std::string> kubelets;
  for (const auto& [name, resources] : pods) {
    const std::string manifest =
        Manifest(name, "uid-" + name, {{.name = "app", .resources = resources}});
    ASSERT_TRUE(kubelet_.WriteManifest(name, manifest).ok());
    ASSERT_TRUE(reference.WriteManifest(name, manifest).ok());
  }
  for (const auto& pod : pods) {
    const std::string& name = pod.first;  // a structured binding cannot be captured (clang 14)
    Running mine = WaitForRunning(name, "app");
    Running theirs = WaitForRunningOn(reference, name, "app");
    ASSERT_FALSE(mine.id.empty() || theirs.id.empty()) << name;
    // kubelet's reconcile loop narrows the shared pool of earlier containers within a second
    // or so; topologyd's pushes likewise: wait until both views agree or time runs out.
    PollUntil([&] {
      ours[name] = PlacementOf(*runtime_, mine.id) + " " + CfsQuotaOf(*runtime_, mine.id);
      kubelets[name] =
          PlacementOf(reference_cri, theirs.id) + " " + CfsQuotaOf(reference_cri, theirs.id);
      return ours[name] == kubelets[name];
    });
  }
  EXPECT_EQ(ours, kubelets);
  // What kubelet's code does, spelled out: the exclusive container and its pod unthrottled, the
  // shared pool narrowed to CPU 0 for the others, a CPU limit's quota kept.
  EXPECT_EQ(kubelets["exclusive"], "allowed=1 cgroup=1 container=-1 pod=-1");
  EXPECT_EQ(kubelets["limited"], "allowed=0 cgroup=0 container=50000 pod=50000");
  EXPECT_EQ(kubelets["besteffort"], "allowed=0 cgroup=0 container=-1 pod=-1");
}

// With the gate off in topologyd's config, the older behaviour: kubelet's quota stays.
class KubeletE2EQuotaGateOffTest : public KubeletE2ETest {
 protected:
  KubeletE2EQuotaGateOffTest() {
    stack_options_.topologyd_policy += "featureGates: {DisableCPUQuotaWithExclusiveCPUs: false}\n";
  }
};

TEST_F(KubeletE2EQuotaGateOffTest, ExclusiveContainerKeepsKubeletsCfsQuota) {
  ASSERT_TRUE(
      kubelet_.WriteManifest("q", Manifest("q", "uid-q", {{.name = "app", .resources = kOneCpu}}))
          .ok());
  Running exclusive = WaitForRunning("q", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-q", "app", exclusive.id, "1"));
  EXPECT_FALSE(stack_->Allocation("uid-q", "app")->cpu_quota_unlimited());
  EXPECT_EQ(CfsQuota(exclusive.id), "container=100000 pod=100000");
}

// An init container and a restartable sidecar beside a Guaranteed app container, their specs
// estimated from the CRI: the fractional init container and sidecar share the pool, the app
// container gets the exclusive CPU.
TEST_P(KubeletBothFrontEndsTest, InitContainerAndSidecarBesideAnExclusiveApp) {
  const char* small = "{limits: {cpu: 100m, memory: 32Mi}}";
  ASSERT_TRUE(
      kubelet_
          .WriteManifest(
              "s", Manifest("s", "uid-s",
                            {{.name = "setup",
                              .resources = small,
                              .command = "true",
                              .kind = ContainerSpec::kInit},
                             {.name = "proxy", .resources = small, .kind = ContainerSpec::kSidecar},
                             {.name = "app", .resources = kOneCpu}}))
          .ok());
  Running proxy = WaitForRunning("s", "proxy");
  Running app = WaitForRunning("s", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-s", "app", app.id, "1"));
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-s", "proxy", proxy.id, "0"));
  ExpectHeldOnce({"uid-s"});
}

class KubeletE2EAnnotationTest : public KubeletE2ETest {
 protected:
  KubeletE2EAnnotationTest() {
    stack_options_.shim_config =
        "failurePolicy: Fail\n"
        "podSpec: {sources: [annotation, estimate]}\n"
        "resync: {period: 1s}\n"
        "topologydTimeout: 3s\n";
  }
};

// The pod's spec from the topologyd.io/resources annotation: kubelet passes the pod's
// annotations on in RunPodSandbox, topologyd admits the whole pod there, and the app container
// reuses the exclusive CPU its init container had, as kubelet's static policy does.
TEST_F(KubeletE2EAnnotationTest, PodFromTheAnnotationReusesTheInitContainersCpu) {
  const std::string annotation =
      "    topologyd.io/resources: '{\"initContainers\": [{\"name\": \"setup\", \"resources\": "
      "{\"limits\": {\"cpu\": \"1\", \"memory\": \"64Mi\"}}}], \"containers\": [{\"name\": "
      "\"app\", \"resources\": {\"limits\": {\"cpu\": \"1\", \"memory\": \"64Mi\"}}}]}'\n";
  ASSERT_TRUE(kubelet_
                  .WriteManifest("a", Manifest("a", "uid-a",
                                               {{.name = "setup",
                                                 .resources = kOneCpu,
                                                 .command = "true",
                                                 .kind = ContainerSpec::kInit},
                                                {.name = "app", .resources = kOneCpu}},
                                               annotation))
                  .ok());
  Running app = WaitForRunning("a", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-a", "app", app.id, "1"));
  auto setup = stack_->Allocation("uid-a", "setup");
  ASSERT_TRUE(setup.has_value());
  EXPECT_EQ(setup->cpus(), "1");
  EXPECT_EQ(stack_->SharedPool(), "0");
  ExpectHeldOnce({"uid-a"});
}

// A container that crashes is restarted by kubelet (a new container id) on the same CPU.
TEST_P(KubeletBothFrontEndsTest, ACrashedContainerIsRestartedOnTheSameCpus) {
  ASSERT_TRUE(
      kubelet_
          .WriteManifest(
              "c", Manifest("c", "uid-c",
                            {{.name = "app", .resources = kOneCpu, .command = "sleep 3; exit 1"}}))
          .ok());
  Running first = WaitForRunning("c", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-c", "app", first.id, "1"));
  Running again = WaitForRunning("c", "app", /*restarts=*/1);
  EXPECT_NE(again.id, first.id);
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-c", "app", again.id, "1"));
  ExpectHeldOnce({"uid-c"});
}

// A removed manifest: kubelet kills the pod, the shim releases it, the CPU is free again.
TEST_P(KubeletBothFrontEndsTest, ARemovedManifestReleasesThePod) {
  ASSERT_TRUE(
      kubelet_.WriteManifest("r", Manifest("r", "uid-r", {{.name = "app", .resources = kOneCpu}}))
          .ok());
  Running app = WaitForRunning("r", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-r", "app", app.id, "1"));
  ASSERT_TRUE(kubelet_.RemoveManifest("r").ok());
  EXPECT_TRUE(PollUntil([&] {
    v1::ListAllocationsResponse response;
    return stack_->Allocations(&response).ok() && response.pods().empty();
  }));
  EXPECT_EQ(stack_->SharedPool(), "0-1");
  EXPECT_TRUE(PollUntil([&] { return !kubelet_.Pod("default", StaticPodName("r")).ok(); }));
}

// A pod topologyd refuses: kubelet shows CreateContainerError with topologyd's reason, keeps
// retrying, and starts the pod once the CPU it needs is free.
TEST_P(KubeletBothFrontEndsTest, ARefusedPodShowsTheReasonAndStartsOnceThereIsRoom) {
  ASSERT_TRUE(kubelet_
                  .WriteManifest("first", Manifest("first", "uid-first",
                                                   {{.name = "app", .resources = kOneCpu}}))
                  .ok());
  Running first = WaitForRunning("first", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-first", "app", first.id, "1"));

  ASSERT_TRUE(kubelet_
                  .WriteManifest("second", Manifest("second", "uid-second",
                                                    {{.name = "app", .resources = kOneCpu}}))
                  .ok());
  std::string waiting;
  EXPECT_TRUE(PollUntil([&] {
    auto view = kubelet_.Pod("default", StaticPodName("second"));
    if (!view.ok()) return false;
    for (const nlohmann::json& c :
         (*view)["status"].value("containerStatuses", nlohmann::json::array())) {
      if (c.contains("state") && c["state"].contains("waiting")) {
        waiting = c["state"]["waiting"].dump();
        return c["state"]["waiting"].value("reason", "") == "CreateContainerError";
      }
    }
    return false;
  })) << waiting;
  EXPECT_THAT(waiting, ::testing::HasSubstr("topologyd: "));
  EXPECT_FALSE(stack_->Allocation("uid-second", "app").has_value());

  ASSERT_TRUE(kubelet_.RemoveManifest("first").ok());
  Running second = WaitForRunning("second", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-second", "app", second.id, "1"));
  ExpectHeldOnce({"uid-second"});
}

// kill -9 of kubelet, of the shim and of topologyd while a pod is being started, each
// restarted: the pods already running keep their CPUs, the new pod ends up running pinned, and
// nothing is lost or held twice.
class KubeletE2ECrashTest : public KubeletE2ETest,
                            public ::testing::WithParamInterface<std::string> {};

TEST_P(KubeletE2ECrashTest, KillNineMidwayLosesNothingAndHoldsNothingTwice) {
  ASSERT_TRUE(kubelet_
                  .WriteManifest("shared", Manifest("shared", "uid-shared",
                                                    {{.name = "app", .resources = kBurstable}}))
                  .ok());
  Running shared = WaitForRunning("shared", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-shared", "app", shared.id, "0-1"));

  ASSERT_TRUE(
      kubelet_
          .WriteManifest("new", Manifest("new", "uid-new", {{.name = "app", .resources = kOneCpu}}))
          .ok());
  // Mid-way: once kubelet has asked for the pod's sandbox.
  ASSERT_TRUE(PollUntil([&] {
    cri::ListPodSandboxResponse sandboxes;
    auto context = runtime_->NewContext();
    if (!runtime_->runtime().ListPodSandbox(context.get(), {}, &sandboxes).ok()) return false;
    for (const auto& s : sandboxes.items()) {
      if (s.metadata().uid() == "uid-new") return true;
    }
    return false;
  }));
  const std::string victim = GetParam();
  if (victim == "kubelet") {
    kubelet_.Stop(SIGKILL);
    ASSERT_TRUE(kubelet_.Restart().ok());
  } else if (victim == "shim") {
    stack_->StopShim(SIGKILL);
    ASSERT_TRUE(stack_->StartShim().ok());
  } else {
    stack_->StopTopologyd(SIGKILL);
    ASSERT_TRUE(stack_->StartTopologyd().ok());
  }

  Running pinned = WaitForRunning("new", "app");
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-new", "app", pinned.id, "1"));
  Running still = WaitForRunning("shared", "app");
  EXPECT_EQ(still.id, shared.id);
  ASSERT_NO_FATAL_FAILURE(ExpectPinned("uid-shared", "app", shared.id, "0"));
  ExpectHeldOnce({"uid-shared", "uid-new"});
}

INSTANTIATE_TEST_SUITE_P(EachProcess, KubeletE2ECrashTest,
                         ::testing::Values("kubelet", "shim", "topologyd"));

}  // namespace
}  // namespace topologyd::testing
