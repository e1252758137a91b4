// Admission: kubelet's Topology Manager around the three hint providers (devices, CPUs,
// memory + hugepages, in kubelet's registration order) for one pod: hints, merge under the
// pod's policy and scope, allocation inside the merged hint, kubelet's rejection reasons.
// Scopes, messages and the extended-resource rule: docs/admission.md, "Orchestration".
//
// All or nothing, unlike kubelet: Admit works on a copy of the state and returns the new state
// only on success; a rejected pod leaves the state exactly as it was. Explain() is Admit()
// without taking the new state, so an explanation cannot drift from the decision.
//
// Rejections are results (admitted == false, kubelet's reason and message); a Status error
// means the request could not be processed. Pure functions; thread-compatible values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/admission/node_policy.h"
#include "lib/admission/provider.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/merge.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"
#include "lib/state/state.h"

namespace topologyd::admission {

// One provider's answer in one merge.
struct ProviderHintsEntry {
  std::string provider;  // "devices", "cpu", "memory"
  hints::ProviderHints hints;
  friend bool operator==(const ProviderHintsEntry&, const ProviderHintsEntry&) = default;
};

// One merge: for one container (container scope) or for the whole pod (pod scope).
struct MergeStep {
  std::optional<std::string> container;  // nullopt = the pod (pod scope)
  std::vector<ProviderHintsEntry> providers;
  // When `limit_error` is set: {any NUMA node, not preferred}, not admitted.
  hints::MergeResult merged;
  // Non-empty when the merge exceeded its limits and was given up (hints::MergeWithin's
  // RESOURCE_EXHAUSTED message); the admission's message repeats it.
  std::string limit_error;
  friend bool operator==(const MergeStep&, const MergeStep&) = default;
};

// One guest NUMA cell of a pod split over N NUMA nodes (topologyd.io/numa-nodes; docs/
// admission.md, "Pods split over N NUMA nodes").
struct NumaCell {
  int numa_node = 0;    // OS id
  int cpus = 0;         // exclusive CPUs the cell asks for
  uint64_t memory = 0;  // bytes the cell asks for
  CpuSet cpu_set;       // the CPUs taken on the node (empty without the static CPU policy)
  friend bool operator==(const NumaCell&, const NumaCell&) = default;
};

struct NumaSplit {
  bool placed_by_pod = false;   // the nodes came from topologyd.io/numa-placement
  std::vector<NumaCell> cells;  // in cell order; filled once the nodes are known
  friend bool operator==(const NumaSplit&, const NumaSplit&) = default;
};

struct Explanation {
  hints::Policy policy = hints::Policy::kNone;
  Scope scope = Scope::kContainer;
  std::vector<std::string> notes;  // annotation used / ignored, policy none, ...
  // In the order performed; stops at the rejecting step. Empty under policy none.
  std::vector<MergeStep> merges;
  // Set for a pod with the NUMA split annotations: the split replaces the merges.
  std::optional<NumaSplit> numa_split;
  friend bool operator==(const Explanation&, const Explanation&) = default;
};

struct AdmissionResult {
  bool admitted = false;
  std::string reason;   // empty when admitted
  std::string message;  // empty when admitted
  // What each container was given (a "containers" entry of docs/cli.md, `admit`): its record
  // without a runtime binding yet. `cpus` is the shared pool after this admission when the
  // container is not exclusive (the engine re-pins shared containers whenever the pool
  // changes); `numa_affinity` the merged hint's NUMA nodes (empty when the hint had no
  // affinity); `memory` the bytes its blocks take per NUMA node (state::MemoryNodes: its
  // cpuset.mems). Init containers first, then app containers. Empty when rejected.
  std::vector<state::ContainerRecord> containers;
  // The state to commit: the input state plus this pod when admitted; the input state
  // unchanged when rejected.
  AllocationState new_state;
  Explanation explanation;
  ManagerCounts counts;
};

// What an admission may spend, beside the node's configuration. The defaults are production's.
struct AdmitOptions {
  // Bounds on each Topology Manager merge. Real providers' hints stay far below the defaults
  // (docs/merge.md, "Honest bounds"); a merge that would pass them rejects the pod with
  // TopologyAffinityError and the sizes that were too large, instead of running for minutes.
  hints::MergeLimits merge_limits;
};

// Admits `pod` against `state`. INVALID_ARGUMENT (not a rejection) for a request that cannot
// be processed: an empty uid, or a container name used twice. A pod whose containers already
// hold resources in `state` is re-admitted as kubelet does after a restart: the providers
// rebuild their hints from what the containers hold and keep it.
[[nodiscard]] absl::StatusOr<AdmissionResult> Admit(const NodePolicy& node,
                                                    const AllocationState& state,
                                                    const pod::Pod& pod);
[[nodiscard]] absl::StatusOr<AdmissionResult> Admit(const NodePolicy& node,
                                                    const AllocationState& state,
                                                    const pod::Pod& pod,
                                                    const AdmitOptions& options);

// Admit() without a state change: the result's new_state is cleared (empty), everything else
// is what Admit() would return.
[[nodiscard]] absl::StatusOr<AdmissionResult> Explain(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const pod::Pod& pod);
[[nodiscard]] absl::StatusOr<AdmissionResult> Explain(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const pod::Pod& pod,
                                                      const AdmitOptions& options);

// Returns what the pod (or one of its containers) holds: exclusive CPUs back to the shared
// pool (CPUs another container of the pod still holds stay out), memory blocks and devices.
// Unknown pods / containers: state unchanged.
AllocationState Release(const NodePolicy& node, const AllocationState& state,
                        std::string_view pod_uid,
                        std::optional<std::string_view> container = std::nullopt);

// A container of the pod started, after its regular init containers `finished` ran to
// completion: what kubelet's managers free at that point (the memory of those init
// containers; their CPUs and devices stay held until the pod goes).
AllocationState InitContainersFinished(const NodePolicy& node, const AllocationState& state,
                                       const std::string& pod_uid,
                                       const std::vector<std::string>& finished);

}  // namespace topologyd::admission
