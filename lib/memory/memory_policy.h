// The Memory Manager static policy as pure functions over MemoryState (spec
// kubelet-memory-device-checkpoint.md §a.1, §a.4, §a.5): topology hints for `memory` and
// `hugepages-<size>`, allocation inside the topology manager's affinity, release, and the NUMA
// nodes that become a container's cpuset.mems.
//
// Only Guaranteed pods take part: for other pods the hint functions return std::nullopt (no
// map) and Allocate returns the state unchanged.
//
// Hints list the masks kubelet's calculateHints returns, with every requested type getting the
// same list. When no mask fits, every requested type gets an empty list ("cannot be
// satisfied"), which the topology manager turns into a non-preferred any-node hint (§a.4 "No
// fit"): restricted and single-numa-node refuse the pod at the merge with
// TopologyAffinityError. (kubelet's Go code returns a map without entries there, "no
// preference", so only its Allocate fails, with UnexpectedAdmissionError.) Two forms of
// hints::ResourceHints are used:
// * explicit, in kubelet's order (mask size, then lexicographic), when the enumeration domain
//   (below) has at most kMaxExplicitNumaNodes (8) nodes — kubelet's own default limit — or when
//   the list is not upward closed;
// * upward closed otherwise. kubelet's list is not upward closed in general (the group rules
//   reject some wider masks and accept others), but it is whenever no node of the domain that
//   holds blocks, and no mask that fits only thanks to reusable init-container memory, gives a
//   valid mask: the valid masks are then exactly the masks of the unused nodes that hold the
//   request in allocatable and free bytes. The generators are their inclusion-minimal masks,
//   preferred iff of the preferred size, and Expand() gives kubelet's list (in size-then-value
//   order; the merge does not depend on the order). If finding them takes more than
//   kMaxMaskBudget steps, the explicit form is used.
//
// Enumeration domain: kubelet walks all 2^N - 1 masks of the N NUMA nodes. We do the same when
// N <= kMaxExactNumaNodes (16), so results are kubelet's exactly. Above that the domain is only
// the nodes that have allocatable bytes of a requested type (a node without any adds nothing
// but width; kubelet would list such wider masks, never as preferred); if those are still more
// than 16, an explicit list walks masks by increasing size and stops after kMaxMaskBudget
// masks, so the widest masks of huge machines are missing from it (an upward-closed list has
// them all). Above kMaxDenseMergeNodes (22) nodes the explicit list also keeps only its first
// kMaxHintsWithoutDenseMerge (2,048) masks: there the merge has no dense engine and two
// explicit lists (memory and a hugepages type get the same one) cost |list|^2 steps, so lists
// of tens of thousands of masks on a busy node would pass the merge's work limits and the pod
// would be refused; the narrowest masks are the ones a merge chooses among first. kubelet
// refuses to run its topology manager on more than 8 NUMA nodes unless
// max-allowable-numa-nodes is raised, and is impractically slow far below 64, so there is no
// kubelet answer to be identical to there.
//
// Allocate's own choice of a default or extended hint always reads the explicit list.
//
// Masks are over NUMA positions (index in MemoryState::machine_state, ascending OS id).
// Allocation failures are FAILED_PRECONDITION with kubelet's message (e.g. "[memorymanager]
// failed to find NUMA nodes to extend the current topology hint"); a request that is not an
// integer number of bytes is INVALID_ARGUMENT "[memorymanager] failed to represent quantity as
// int64". On failure the input state is untouched.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_state.h"
#include "lib/pod/pod.h"

#include "absl/status/statusor.h"

namespace topologyd::memory {

inline constexpr int kMaxExactNumaNodes = 16;
inline constexpr int kMaxExplicitNumaNodes = 8;
inline constexpr int64_t kMaxMaskBudget = int64_t{1} << 16;
inline constexpr int kMaxDenseMergeNodes = 22;
inline constexpr size_t kMaxHintsWithoutDenseMerge = 2048;

// Bytes per memory type ("memory", "hugepages-*") of a container's requests; other resources
// are ignored.
absl::StatusOr<std::map<std::string, uint64_t>> ContainerMemoryRequest(const pod::Container& c);
// The pod's effective memory request (§a.4 pod scope): per type any container requests,
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

// RemoveContainer: returns the container's bytes and group memberships (no-op when unknown).
MemoryState RemoveContainer(MemoryState state, std::string_view pod_uid,
                            std::string_view container_name);
// Every container of the pod, and the pod's reuse bookkeeping of init containers' memory.
MemoryState RemovePod(MemoryState state, std::string_view pod_uid);

// The NUMA OS ids of the container's blocks (cpuset.mems); empty when it has none.
std::vector<int> ContainerMemoryNumaNodes(const MemoryState& state, std::string_view pod_uid,
                                          std::string_view container_name);

}  // namespace topologyd::memory
