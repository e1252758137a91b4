#include "lib/cpu/take_by_topology.h"

#include <algorithm>

#include "lib/cpu/take_distributed.h"
#include "lib/cpu/take_packed.h"

namespace topologyd::cpu {

TakeOptions MakeTakeOptions(const CpuTopology& topology, const StaticPolicyOptions& options) {
  TakeOptions take;
  take.distribute_cpus_across_numa = options.distribute_cpus_across_numa;
  take.distribute_cpus_across_cores = options.distribute_cpus_across_cores;
  take.prefer_align_by_uncore_cache = options.prefer_align_by_uncore_cache;
  take.align_by_socket = options.align_by_socket;
  // Whole cores travel together when full-pcpus-only is on.
  take.cpu_group_size = options.full_pcpus_only ? topology.CpusPerCore() : 1;
  return take;
}

absl::StatusOr<CpuSet> TakeByTopology(const CpuTopology& topology, const TakeOptions& options,
                                      const CpuSet& available, int num_cpus) {
  const CpuSortingStrategy strategy = options.distribute_cpus_across_cores
                                          ? CpuSortingStrategy::kSpread
                                          : CpuSortingStrategy::kPacked;
  if (options.distribute_cpus_across_numa) {
    return TakeByTopologyNumaDistributed(topology, available, num_cpus, options.cpu_group_size,
                                         strategy);
  }
  return TakeByTopologyNumaPacked(topology, available, num_cpus, strategy,
                                  options.prefer_align_by_uncore_cache);
}

absl::StatusOr<CpuSet> AllocateCpus(const CpuTopology& topology, const TakeOptions& options,
                                    const CpuSet& allocatable, int num_cpus,
                                    const std::optional<hints::NumaMask>& affinity) {
  CpuSet result;
  if (affinity.has_value()) {
    const std::vector<int> numa_ids = topology.numa().Ids(*affinity);
    CpuSet aligned_scope = options.align_by_socket
                               ? topology.CpusInSockets(topology.SocketsInNumaNodes(numa_ids))
                               : topology.CpusInNumaNodes(numa_ids);
    CpuSet aligned = allocatable.Intersection(aligned_scope);
    const int take = std::min(num_cpus, aligned.Size());
    absl::StatusOr<CpuSet> taken = TakeByTopology(topology, options, aligned, take);
    if (!taken.ok()) return taken.status();
    result = *taken;
  }
  absl::StatusOr<CpuSet> rest =
      TakeByTopology(topology, options, allocatable.Difference(result), num_cpus - result.Size());
  if (!rest.ok()) return rest.status();
  return result.Union(*rest);
}

}  // namespace topologyd::cpu
