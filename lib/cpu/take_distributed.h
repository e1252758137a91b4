// kubelet's distribute-cpus-across-numa allocator, takeByTopologyNUMADistributed
// (docs/cpu-policy.md, "Options"): when a request needs more than one NUMA node,
// spread it evenly over the fewest NUMA nodes that can hold it, in groups of
// `cpu_group_size` CPUs, choosing the combination that leaves the free CPUs of all NUMA
// nodes most balanced (lowest standard deviation, rounded to 3 decimals).
#pragma once

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_accumulator.h"
#include "lib/cpu/cpu_topology.h"
#include "lib/cpuset/cpuset.h"

namespace topologyd::cpu {

// Chooses `num_cpus` CPUs of `available` as kubelet does. Requests that are not a multiple
// of `cpu_group_size` (values < 1 count as 1), and requests no NUMA combination can balance,
// go to the packed allocator without uncore alignment.
//
// Divergence, on purpose: where kubelet's remainder loops would spin forever (no NUMA node
// of the chosen remainder set still has a whole group free), a candidate is skipped, and a
// stuck final allocation falls back to the packed allocator instead of hanging.
//
// Errors: as TakeByTopologyNumaPacked; INTERNAL "accounting error, ..." should never happen.
absl::StatusOr<CpuSet> TakeByTopologyNumaDistributed(const CpuTopology& topology,
                                                     const CpuSet& available, int num_cpus,
                                                     int cpu_group_size,
                                                     CpuSortingStrategy strategy);

}  // namespace topologyd::cpu
