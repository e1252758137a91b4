// ContainerPlacer: what the shim asks of topologyd for a pod or a container, wherever the
// shim meets it (a CRI call, or the resync finding it running): its placement, the failure
// policy when topologyd cannot answer, the pod cgroup's CFS quota for a pod with exclusive
// CPUs, binding a created container, releasing what the runtime no longer runs.
//
// Thread-safe; every method may wait on topologyd (a worker's job).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

#include "cri/v1/runtime.pb.h"
#include "shim/allocation_cache.h"
#include "shim/durability_wait.h"
#include "shim/pod_cgroup_quota.h"
#include "shim/pod_spec_resolver.h"
#include "shim/runtime_book.h"
#include "shim/shim_config.h"
#include "shim/topologyd_client.h"

namespace topologyd::shim {

class ContainerPlacer {
 public:
  using Deadline = TopologydClient::Deadline;

  // A container about to be created (or found running): how to go on.
  struct Planned {
    absl::Status status;                         // not OK: refuse it with this
    std::optional<Placement> placement;          // nullopt: leave it as kubelet asked
    std::shared_ptr<DurabilityWait> durability;  // only when answered when decided
  };

  // `pod_quota` null: pod cgroups are not written.
  ContainerPlacer(const ShimConfig& config, TopologydClient* topologyd, PodSpecResolver* specs,
                  AllocationCache* cache, RuntimeBook* book, const PodCgroupQuota* pod_quota);

  // A sandbox about to be run: with the pod's full spec, topologyd decides the whole pod now,
  // as kubelet admits a pod before creating anything; without it the containers are learnt one
  // CreateContainer at a time. Not OK: refuse the sandbox with it.
  absl::Status PlanPod(const SandboxRecord& sandbox, std::optional<Deadline> deadline);

  // With `answer_when_decided`, topologyd's answer may come before its decision is durable
  // (then `durability` is set and already being waited for).
  Planned PlanContainer(const SandboxRecord& sandbox, const std::string& name,
                        const runtime::v1::LinuxContainerResources& resources,
                        std::optional<Deadline> deadline, bool answer_when_decided);

  // Once per pod, when topologyd says a container of the pod runs without a CFS quota: the pod
  // cgroup's quota unlimited, as kubelet's pod container manager creates it for such a pod. A
  // failure is logged, never kubelet's: the container still runs on its own CPUs.
  void LiftPodQuota(const SandboxRecord& sandbox);

  // Binds a created container in topologyd; logs (and leaves to the next resync) what fails.
  void Bind(const ContainerRecord& container);
  // A removed container: released when it is the instance topologyd has bound and no newer
  // one was created (kubelet's garbage collection removes old instances while a newer one runs
  // or is about to start).
  void ReleaseRemoved(const RuntimeBook::Removed& removed);
  void ReleasePod(const std::string& pod_uid, std::string_view why);

 private:
  const ShimConfig config_;
  TopologydClient* const topologyd_;
  PodSpecResolver* const specs_;
  AllocationCache* const cache_;
  RuntimeBook* const book_;
  const PodCgroupQuota* const pod_quota_;
};

}  // namespace topologyd::shim
