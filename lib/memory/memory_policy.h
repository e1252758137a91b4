// The Memory Manager static policy as pure functions over MemoryState: topology hints for
// `memory` and `hugepages-<size>`, allocation inside the topology manager's affinity, release,
// and the NUMA nodes that become a container's cpuset.mems. The rules, the two forms of the
// hint lists and their bounds on large machines: docs/admission.md, "Memory and hugepages".
//
// Only Guaranteed pods take part: for other pods the hint functions return std::nullopt (no
// map) and Allocate returns the state unchanged. Every requested type gets the same list; an
// empty one when no mask fits ("cannot be satisfied").
//
// Masks are over NUMA positions (index in MemoryState::machine_state, ascending OS id).
// Errors: FAILED_PRECONDITION with kubelet's message; a request that is not a whole number of
// bytes is INVALID_ARGUMENT. On failure the input state is untouched. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/hints/merge.h"
#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_state.h"
#include "lib/pod/pod.h"

namespace topologyd::memory {

inline constexpr int kMaxExactNumaNodes = 16;
inline constexpr int kMaxExplicitNumaNodes = 8;
inline constexpr int64_t kMaxMaskBudget = int64_t{1} << 16;
inline constexpr size_t kMaxHintsWithoutDenseMerge = 2048;

// Bytes per memory type ("memory", "hugepages-*") of a container's requests; other resources
// are ignored.
absl::StatusOr<std::map<std::string, uint64_t>> ContainerMemoryRequest(const pod::Container& c);
// The pod's effective memory request (pod scope): per type any container requests,
// max(largest init request stacked on the sidecars before it, sum of app containers + sidecars).
absl::StatusOr<std::map<std::string, uint64_t>> PodMemoryRequest(const pod::Pod& pod);

// Container scope (GetTopologyHints). NOT_FOUND when the container is not in the pod.
absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const MemoryState& state,
                                                               const pod::Pod& pod,
                                                               std::string_view container_name);
// Pod scope (GetPodTopologyHints).
absl::StatusOr<hints::ProviderHints> GetPodTopologyHints(const MemoryState& state,
                                                         const pod::Pod& pod);

// The same for a container of `pod` already looked up, with the pod's QoS class already
// computed (an admission walks every container: finding each by name and classifying the pod
// each time would cost the pod's size per container).
absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const MemoryState& state,
                                                               const pod::Pod& pod,
                                                               const pod::OrderedContainer& c,
                                                               bool guaranteed);

// Allocate(pod, container) under the topology manager's `affinity` for the container
// (affinity.affinity == nullopt: kubelet's "none" policy; the best own hint is used).
absl::StatusOr<MemoryState> Allocate(MemoryState state, const pod::Pod& pod,
                                     std::string_view container_name,
                                     const hints::TopologyHint& affinity);
// The same for a container already looked up, as GetContainerTopologyHints above. The state
// is taken by value so that an admission can move it through its containers without copies.
absl::StatusOr<MemoryState> Allocate(MemoryState state, const pod::Pod& pod,
                                     const pod::OrderedContainer& c, bool guaranteed,
                                     const hints::TopologyHint& affinity);

// Pins `size` bytes of `type` for the container as one more block over `numa_ids` (OS ids,
// ascending), as kubelet's allocation records a block (its updateMachineState: lowest node
// first), without hints and without the group rule: for a caller that chose the nodes by its
// own rules (a pod split over N NUMA nodes, docs/admission.md). FAILED_PRECONDITION when the
// nodes' free bytes of `type` add up to less than `size`.
absl::StatusOr<MemoryState> PinBlock(MemoryState state, std::string_view pod_uid,
                                     std::string_view container_name,
                                     const std::vector<int>& numa_ids, std::string_view type,
                                     uint64_t size);

// RemoveContainer: returns the container's bytes and group memberships (no-op when unknown).
MemoryState RemoveContainer(MemoryState state, std::string_view pod_uid,
                            std::string_view container_name);
// Every container of the pod, and the pod's reuse bookkeeping of init containers' memory.
MemoryState RemovePod(MemoryState state, std::string_view pod_uid);

// Bytes the container's blocks take per NUMA node (OS id) and resource. Every node of a block is
// listed, even with 0 bytes, so the node set is the block's affinity; the split of a multi-node
// block is indicative (lowest node first, up to each node's allocatable).
std::map<int, std::map<std::string, uint64_t>> ContainerMemoryByNode(
    const MemoryState& state, std::string_view pod_uid, std::string_view container_name);

}  // namespace topologyd::memory
