// kubelet's default exclusive-CPU allocator, takeByTopologyNUMAPacked
// (docs/cpu-policy.md, "How CPUs are chosen"): whole NUMA nodes and sockets first, then
// (optionally) uncore caches, then whole cores, then single CPUs in packing order.
#pragma once

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_accumulator.h"
#include "lib/cpu/cpu_topology.h"
#include "lib/cpuset/cpuset.h"

namespace topologyd::cpu {

// Chooses `num_cpus` CPUs of `available` exactly as kubelet does. `prefer_uncore` is the
// prefer-align-cpus-by-uncorecache option; kSpread skips the whole-core step
// (distribute-cpus-across-cores).
//
// Errors: RESOURCE_EXHAUSTED "not enough cpus available to satisfy request: requested=N,
// available=M" (M = |available| as passed) when fewer than N of `available` are in the
// topology; INTERNAL "failed to allocate cpus" if the steps cannot complete (kubelet's
// unreachable branch). num_cpus == 0 yields the empty set.
absl::StatusOr<CpuSet> TakeByTopologyNumaPacked(const CpuTopology& topology,
                                                const CpuSet& available, int num_cpus,
                                                CpuSortingStrategy strategy, bool prefer_uncore);

// The error text kubelet uses when a request exceeds the free CPUs.
absl::Status NotEnoughCpusError(int requested, int available);

}  // namespace topologyd::cpu
