// CriHandlers: what the shim does around the CRI calls it intercepts (docs/shim.md has the
// table). Each handler that calls topologyd or the runtime (synchronously) runs on one of the
// shim's worker threads, never on a gRPC thread; only the bookkeeping of AfterOnlyBooks runs on
// the relay's.
//
//   RunPodSandbox            with a full spec: admit the whole pod before the sandbox exists
//   CreateContainer          place the container (admitting it if topologyd does not hold it)
//                            and put its CPUs and memory nodes into the forwarded request;
//                            kubelet's answer waits until topologyd has the placement on disk
//   (both)                   for a pod with exclusive CPUs, the CFS quota kubelet's static
//                            policy sets: none for the exclusive container, the sandbox and
//                            the pod cgroup
//   StartContainer           bind the new container id and cgroup in topologyd
//   RemoveContainer          release the container if this instance is the bound one
//   StopPodSandbox /
//   RemovePodSandbox         release the pod (its newest sandbox only)
//   UpdateContainerResources keep the cpuset topologyd decided in what reaches the runtime
//
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

#include "lib/shim/pod_book.h"

#include "cri/v1/runtime.grpc.pb.h"
#include "shim/allocation_cache.h"
#include "shim/durability_wait.h"
#include "shim/pod_cgroup_quota.h"
#include "shim/pod_spec_resolver.h"
#include "shim/shim_config.h"
#include "shim/topologyd_client.h"

namespace topologyd::shim {

inline constexpr std::string_view kRuntimeService = "/runtime.v1.RuntimeService/";

// The request to forward, or the status to answer kubelet with instead.
struct Forward {
  absl::Status status;
  std::string request;
  // Set when topologyd answered before its decision was durable: kubelet gets the runtime's
  // answer only once this settles OK (see AfterCreateNotDurable otherwise).
  std::shared_ptr<DurabilityWait> durability;
};

class CriHandlers {
 public:
  using Deadline = std::chrono::system_clock::time_point;

  // `pod_quota` null: pod cgroups are not written.
  CriHandlers(const ShimConfig& config, TopologydClient* topologyd, PodSpecResolver* specs,
              AllocationCache* cache, runtime::v1::RuntimeService::StubInterface* runtime,
              const PodCgroupQuota* pod_quota);

  static bool Intercepts(std::string_view method);

  Forward Before(std::string_view method, std::string request, std::optional<Deadline> deadline);
  // Whether After(method, ...) only updates the shim's own records: it makes no call and
  // never waits, so it may run on the relay's thread.
  static bool AfterOnlyBooks(std::string_view method);

  // The bookkeeping after the runtime answered (`ok`, with `response`) the forwarded call;
  // kubelet gets the runtime's answer unchanged once it is done.
  void After(std::string_view method, const std::string& forwarded_request, bool ok,
             const std::string& response);

  // A CreateContainer forwarded on a placement topologyd then could not make durable (`why`):
  // the container, when the runtime created it (`created`), is removed again so that kubelet's
  // retry can create it anew, and that retry asks topologyd again instead of trusting the
  // shim's copy. The status to answer kubelet with. Calls the runtime: a worker's job.
  absl::Status AfterCreateNotDurable(const std::string& forwarded_request, bool created,
                                     const std::string& response, const absl::Status& why);

  // The runtime's view, after a shim restart and periodically: sandboxes and containers into
  // the book; running containers bound in topologyd; pods topologyd holds without a sandbox
  // (twice in a row) released; running containers topologyd does not hold (created while it
  // was unreachable under failurePolicy Ignore) admitted and pinned.
  absl::Status Resync();

  // Pushes every bound container's placement to the runtime when it differs from what the
  // runtime was last given (the shared pool changed): containerd re-applies its stored
  // cpuset on every update, so a cgroup write by topologyd alone would not last.
  void PushPlacements();

 private:
  // A container about to be created: its pod spec (full or estimated) and its placement.
  struct Planned {
    absl::Status status;                         // not OK: answer kubelet with it
    std::optional<Placement> placement;          // nullopt: forward unchanged
    std::shared_ptr<DurabilityWait> durability;  // only when answered when decided
  };
  // With `answer_when_decided`, topologyd's answer may come before its decision is durable
  // (then `durability` is set and already being waited for).
  Planned PlanContainer(const SandboxRecord& sandbox, const std::string& name,
                        const runtime::v1::LinuxContainerResources& resources,
                        std::optional<Deadline> deadline, bool answer_when_decided);
  // Once per pod, when topologyd says a container of the pod runs without a CFS quota: the pod
  // cgroup's quota unlimited, as kubelet's pod container manager creates it for such a pod. A
  // failure is logged, never kubelet's: the container still runs on its own CPUs.
  void LiftPodQuota(const SandboxRecord& sandbox);

  Forward BeforeRunPodSandbox(std::string request, std::optional<Deadline> deadline);
  Forward BeforeCreateContainer(std::string request, std::optional<Deadline> deadline);
  Forward BeforeUpdateContainerResources(std::string request);
  void AfterRunPodSandbox(const std::string& request, const std::string& response);
  void AfterCreateContainer(const std::string& request, const std::string& response);
  void AfterStartContainer(const std::string& request);
  void AfterRemoveContainer(const std::string& request);
  void AfterPodSandboxEnds(const std::string& request, bool removed);

  // The resync's steps: the runtime's sandboxes into the book (the pods with a live sandbox
  // returned); its containers into the book (the running ones returned); a running container
  // topologyd does not hold admitted, pinned and bound; orphaned pods released.
  absl::StatusOr<std::set<std::string>> ReadSandboxes();
  absl::StatusOr<std::vector<ContainerRecord>> ReadContainers();
  void Adopt(const ContainerRecord& container);
  void ReleaseOrphans(const v1::ListAllocationsResponse& held,
                      const std::set<std::string>& live_pods);
  // What the runtime stored of a container's resources; nullopt when it does not answer.
  std::optional<runtime::v1::LinuxContainerResources> StoredResources(
      const std::string& container_id);
  std::chrono::system_clock::time_point RuntimeDeadline() const;

  // Binds the container in topologyd; logs (and leaves to the next resync) what fails.
  void Bind(const ContainerRecord& container);
  void ReleasePod(const std::string& pod_uid, std::string_view why);
  // Sends the runtime the container's placement; true when it took it.
  bool PushPlacement(const std::string& container_id, const Placement& placement);
  SandboxRecord SandboxFromConfig(const std::string& sandbox_id,
                                  const runtime::v1::PodSandboxConfig& config) const;

  const ShimConfig config_;
  TopologydClient* const topologyd_;
  PodSpecResolver* const specs_;
  AllocationCache* const cache_;
  runtime::v1::RuntimeService::StubInterface* const runtime_;
  const PodCgroupQuota* const pod_quota_;

  absl::Mutex mu_;
  PodBook book_ ABSL_GUARDED_BY(mu_);
  // Per container id: the placement the runtime was last given.
  std::map<std::string, Placement> pushed_ ABSL_GUARDED_BY(mu_);
  // Pods found without a sandbox at the last resync.
  std::map<std::string, int> orphan_sightings_ ABSL_GUARDED_BY(mu_);
  bool warned_kubelet_cpuset_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace topologyd::shim
