// CpuAccumulator: the state of one kubelet "take by topology" call and the orderings it
// takes CPUs in (kubelet's cpuAccumulator; docs/cpu-policy.md, "How CPUs are chosen").
//
// The accumulator starts from a free set and a count, and takes whole groups (NUMA nodes,
// sockets, uncore caches, cores) or single CPUs until the count is met. Every ordering is
// built from one rule: ascending number of *free* CPUs in the group, ties by ascending id,
// so the allocator fills the most used group first ("packing"). Whether NUMA nodes or sockets
// form the outer level is fixed per call by the topology's counters (NUMA-first when
// NumSockets >= NumNUMANodes).
//
// Exposed for the allocators in this directory and for tests that check kubelet's orderings;
// not a stable API for other modules (use take_by_topology.h). Not thread-safe; one call.
#pragma once

#include <vector>

#include "lib/cpu/cpu_topology.h"
#include "lib/cpuset/cpuset.h"

namespace topologyd::cpu {

// How single CPUs are ordered in the last step: core by core (packed, the default) or socket
// by socket in id order (spread, the distribute-cpus-across-cores option).
enum class CpuSortingStrategy { kPacked, kSpread };

class CpuAccumulator {
 public:
  // `available` is restricted to the CPUs the topology knows (kubelet's KeepOnly).
  CpuAccumulator(const CpuTopology& topology, const CpuSet& available, int num_cpus,
                 CpuSortingStrategy strategy);

  // Orders over the still-free CPUs. Concatenations are not de-duplicated (kubelet's quirk
  // when a socket spans NUMA nodes under NUMA-first).
  std::vector<int> SortedNumaNodes() const;
  std::vector<int> SortedSockets() const;
  std::vector<int> SortedCores() const;
  std::vector<int> SortedUncoreCaches() const;
  // Single CPUs in packed or spread order, per the strategy.
  std::vector<int> SortedCpus() const;

  // The sorted orders filtered to fully free groups.
  std::vector<int> FreeNumaNodes() const;
  std::vector<int> FreeSockets() const;
  std::vector<int> FreeCores() const;
  std::vector<int> FreeUncoreCaches() const;

  // Adds `cpus` to the result, removes them from the free set, and lowers the need by
  // |cpus| even when some were already taken (kubelet does the same).
  void Take(const CpuSet& cpus);

  void TakeFullNumaNodes();
  void TakeFullSockets();
  // The two "full first/second level" passes in the order NUMA-first / sockets-first implies.
  void TakeFullFirstLevel();
  void TakeFullSecondLevel();
  void TakeUncoreCache();
  void TakeFullCores();
  void TakeRemainingCpus();

  bool NeedsAtLeast(int n) const { return need_ >= n; }
  bool IsSatisfied() const { return need_ < 1; }
  bool IsFailed() const { return need_ > free_.Size(); }

  int need() const { return need_; }
  const CpuSet& result() const { return result_; }
  const CpuSet& free_cpus() const { return free_; }
  const CpuTopology& topology() const { return topology_; }
  bool numa_first() const { return numa_first_; }

  // Free CPUs in NUMA node `numa` (kubelet's details.CPUsInNUMANodes).
  CpuSet FreeCpusInNuma(int numa) const;

 private:
  void TakePartialUncore(int uncore);
  int FreeCountIn(const std::map<int, CpuSet>& groups, int id) const;
  // Sorts `ids` ascending by free CPUs in the group, ties by id.
  void SortAsc(std::vector<int>& ids, const std::map<int, CpuSet>& groups) const;
  // Ids of `level` of the free CPUs whose `outer` id equals `outer_id`, sorted by SortAsc.
  enum class Level { kNuma, kSocket, kCore, kUncore };
  std::vector<int> SortedInner(Level inner, Level outer, int outer_id) const;
  const std::map<int, CpuSet>& GroupsOf(Level level) const;
  static int IdOf(const CpuInfo& info, Level level);

  const CpuTopology& topology_;
  CpuSet free_;
  int need_;
  CpuSet result_;
  bool numa_first_;
  CpuSortingStrategy strategy_;
};

}  // namespace topologyd::cpu
