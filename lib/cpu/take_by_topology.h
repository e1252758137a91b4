// The static policy's choice of exclusive CPUs: the allocator dispatch (kubelet's
// takeByTopology) and allocation under a topology-manager NUMA affinity
// (kubelet's allocateCPUs; docs/cpu-policy.md, "How CPUs are chosen").
#pragma once

#include <optional>

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/policy_options.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/numa_mask.h"

namespace topologyd::cpu {

// What the allocator needs from the options, plus the group size of the NUMA-distributed
// allocator (kubelet: CPUsPerCore with full-pcpus-only, else 1).
struct TakeOptions {
  bool distribute_cpus_across_numa = false;
  bool distribute_cpus_across_cores = false;
  bool prefer_align_by_uncore_cache = false;
  bool align_by_socket = false;
  int cpu_group_size = 1;
};

// kubelet's derivation of TakeOptions from the policy options.
TakeOptions MakeTakeOptions(const CpuTopology& topology, const StaticPolicyOptions& options);

// takeByTopology: the NUMA-distributed allocator when distribute-cpus-across-numa is on, else
// the packed one (with uncore alignment when preferred); spread order with
// distribute-cpus-across-cores. Errors as TakeByTopologyNumaPacked.
absl::StatusOr<CpuSet> TakeByTopology(const CpuTopology& topology, const TakeOptions& options,
                                      const CpuSet& available, int num_cpus);

// allocateCPUs without the state update: from `allocatable` (= shared pool minus reserved,
// plus the pod's reusable CPUs), take what fits inside `affinity` (a mask over NUMA positions;
// with align-by-socket: inside the sockets of those NUMA nodes) first, then the rest from
// anywhere. nullopt affinity = no preference. The affinity is a preference: the result may
// spill out of it. Errors as TakeByTopology.
absl::StatusOr<CpuSet> AllocateCpus(const CpuTopology& topology, const TakeOptions& options,
                                    const CpuSet& allocatable, int num_cpus,
                                    const std::optional<hints::NumaMask>& affinity);

}  // namespace topologyd::cpu
