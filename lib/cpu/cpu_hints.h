// CPU topology hints: the CPU manager as a hint provider for the topology manager
// (kubelet's GetTopologyHints / GetPodTopologyHints; docs/cpu-policy.md, "Topology hints").
//
// kubelet offers every NUMA mask (over the NUMA nodes that have CPUs) whose free CPUs, plus
// the pod's reusable CPUs, can hold the request, provided the mask holds every reusable CPU.
// A mask is "preferred" when it has the minimal number of NUMA nodes that could EVER hold the
// request on this machine (capacity, not free CPUs); with align-by-socket, also when its NUMA
// nodes span exactly the minimal number of sockets.
//
// That list is upward closed (a superset of a feasible mask is feasible, and being wider than
// the minimum it is never preferred by size), so GenerateCpuHints() returns it in the
// upward-closed form of hints::ResourceHints: the minimal feasible masks only (preferred iff
// of minimal size), universe = the positions of the NUMA nodes that have CPUs. It never
// enumerates the 2^N masks: a depth-first search over NUMA nodes with free CPUs adds nodes in
// ascending id order and stops extending a set as soon as it is feasible, smallest sets
// first. The number of minimal masks can grow like C(N, k) on many-node machines (a 24-CPU
// request on 64 nodes of 4 CPUs has 75 million); after kMaxMinimalMasks masks or
// kMaxMinimalMaskSteps search steps the list holds the narrowest ones found so far (in
// kubelet's order), the ones the merge prefers: what is missing then are alternatives of the
// same or a wider size. Up to 16 NUMA nodes the list is always complete.
// With align-by-socket, socket-aligned preferred masks that are not minimal are listed too
// (as extra preferred entries, which the upward-closed form allows).
//
// GenerateCpuHintsExplicit() is kubelet's enumeration verbatim, for small machines and tests.
// Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/static_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/topology_hint.h"

namespace topologyd::cpu {

// The resource name of the CPU provider's hints.
inline constexpr std::string_view kCpuResource = "cpu";

// NUMA nodes (with CPUs) above which the explicit enumeration is refused.
inline constexpr int kMaxExplicitHintNumaNodes = 16;

// Bounds of the minimal-mask search, above what 16 nodes can need (at most C(16, 8) = 12,870
// minimal masks; each pass over one mask size visits at most 2^17 partial sets, and there are
// at most 16 passes), so up to 16 nodes the list is complete.
inline constexpr size_t kMaxMinimalMasks = size_t{1} << 14;
inline constexpr int64_t kMaxMinimalMaskSteps = int64_t{1} << 22;

// Upward-closed hints for `num_cpus` CPUs from `available` plus `reusable` (num_cpus >= 1).
hints::ResourceHints GenerateCpuHints(const CpuTopology& topology, const CpuSet& available,
                                      const CpuSet& reusable, int num_cpus, bool align_by_socket);

// kubelet's explicit list, in its order (by mask size, then lexicographic). FAILED_PRECONDITION
// on machines with more than kMaxExplicitHintNumaNodes NUMA nodes with CPUs.
absl::StatusOr<hints::ResourceHints> GenerateCpuHintsExplicit(const CpuTopology& topology,
                                                              const CpuSet& available,
                                                              const CpuSet& reusable, int num_cpus,
                                                              bool align_by_socket);

// Container scope. nullopt (no preference) for shared-pool containers; for a container that
// already has CPUs: hints regenerated from them, or an empty list (cannot be satisfied) when
// their number differs from the request; otherwise hints over the shared pool minus reserved
// plus the pod's reusable CPUs.
hints::ProviderHints GetTopologyHints(const StaticPolicy& policy, const CpuState& state,
                                      const ContainerRequest& request);

// kubelet's podGuaranteedCPUs over the pod's containers (init containers, in spec order,
// then app containers): the larger of the biggest init container (plus the sidecars declared
// before it) and all app containers plus all sidecars.
int PodGuaranteedCpus(const std::vector<ContainerRequest>& containers);

// Pod scope: hints for the pod's total, with the CPUs its containers already hold counted as
// reusable (and regenerated from them when they already make up the total).
hints::ProviderHints GetPodTopologyHints(const StaticPolicy& policy, const CpuState& state,
                                         const std::string& pod_uid,
                                         const std::vector<ContainerRequest>& containers);

}  // namespace topologyd::cpu
