// CpuTopology: the CPU manager's view of a machine, in kubelet's terms: five counters
// (NumCPUs, NumCores, NumSockets, NumNUMANodes, NumUncoreCache) plus a map CPU id ->
// {CoreID, SocketID, NUMANodeID, UncoreCacheID}. kubelet's allocator decides from this view,
// oddities included, so reproducing its choices means reproducing the view (docs/cpu-policy.md,
// "The kubelet view of the machine"). FromTopology() builds it with kubelet's discovery rules;
// tests may build one from counters and a map, like kubelet's Go test literals.
//
// It keeps the machine's hints::NumaIndex: the hint-mask position of every NUMA id.
// Immutable after construction; const access from many threads is fine.
#pragma once

#include <map>
#include <vector>

#include "lib/cpuset/cpuset.h"
#include "lib/hints/numa_index.h"
#include "lib/topology/topology.h"

namespace topologyd::cpu {

// One logical CPU as kubelet's CPUDetails records it.
struct CpuInfo {
  int core_id = 0;
  int socket_id = 0;
  int numa_id = 0;
  int uncore_id = 0;
  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

// kubelet's five counters. They are what the allocator divides by; they may disagree with
// the map (kubelet's own test topologies do, e.g. NumNUMANodes left at 0).
struct CpuCounters {
  int num_cpus = 0;
  int num_cores = 0;
  int num_sockets = 0;
  int num_numa_nodes = 0;
  int num_uncore_caches = 0;
  friend bool operator==(const CpuCounters&, const CpuCounters&) = default;
};

class CpuTopology {
 public:
  CpuTopology() = default;
  // `numa`: the machine's NUMA nodes (positions for hint masks); when empty, the NUMA ids of
  // the map's CPUs.
  CpuTopology(CpuCounters counters, std::map<int, CpuInfo> details, hints::NumaIndex numa = {});

  const CpuCounters& counters() const { return counters_; }
  int num_cpus() const { return counters_.num_cpus; }
  int num_cores() const { return counters_.num_cores; }
  int num_sockets() const { return counters_.num_sockets; }
  int num_numa_nodes() const { return counters_.num_numa_nodes; }
  int num_uncore_caches() const { return counters_.num_uncore_caches; }

  // Integer divisions of the counters, 0 when the divisor is 0 (kubelet's CPUsPerCore etc.).
  int CpusPerCore() const;
  int CpusPerSocket() const;
  int CpusPerUncore() const;

  const std::map<int, CpuInfo>& details() const { return details_; }
  // nullptr when `cpu` is not in the map. Constant time: the allocator asks for every free
  // CPU several times per admission.
  const CpuInfo* Find(int cpu) const;
  // The entry of `cpu`, which must be in the map (Cpus().Contains(cpu)); callers walk CPUs
  // of the map. Never throws: an id outside the map is a caller bug (asserted in debug
  // builds) and reads as a default CpuInfo.
  const CpuInfo& At(int cpu) const;

  // Every CPU in the map.
  const CpuSet& Cpus() const { return cpus_; }
  // Group id -> all CPUs of the map in that group (kubelet's CPUsInNUMANodes(id) etc.).
  // Cores are keyed by CoreID alone, as in kubelet.
  const std::map<int, CpuSet>& NumaNodes() const { return numa_cpus_; }
  const std::map<int, CpuSet>& Sockets() const { return socket_cpus_; }
  const std::map<int, CpuSet>& Cores() const { return core_cpus_; }
  const std::map<int, CpuSet>& UncoreCaches() const { return uncore_cpus_; }

  // Ascending ids of the NUMA nodes present in the map.
  std::vector<int> NumaIds() const;
  CpuSet CpusInNumaNodes(const std::vector<int>& ids) const;
  CpuSet CpusInSockets(const std::vector<int>& ids) const;
  // Sockets that hold a CPU of one of the NUMA nodes `ids` (kubelet's SocketsInNUMANodes).
  std::vector<int> SocketsInNumaNodes(const std::vector<int>& ids) const;
  // CPUs of every core (by CoreID) holding a CPU of `cpus` (kubelet's reservedPhysicalCPUs).
  CpuSet CpusOfCoresContaining(const CpuSet& cpus) const;

  // NUMA id <-> hint-mask position.
  const hints::NumaIndex& numa() const { return numa_; }

 private:
  CpuCounters counters_;
  std::map<int, CpuInfo> details_;
  // details_ indexed by non-negative CPU id (ids absent from the map hold a default CpuInfo;
  // cpus_ says which are present). Sized by the largest id, like a CpuSet of these CPUs.
  std::vector<CpuInfo> by_id_;
  hints::NumaIndex numa_;
  CpuSet cpus_;
  std::map<int, CpuSet> numa_cpus_;
  std::map<int, CpuSet> socket_cpus_;
  std::map<int, CpuSet> core_cpus_;
  std::map<int, CpuSet> uncore_cpus_;
};

// kubelet's topology.Discover over the topologyd machine model:
//   - only CPUs inside a NUMA node are in the map (cAdvisor lists CPUs per node); NumCPUs
//     still counts every logical CPU of the machine;
//   - CoreID = Core::id (the lowest CPU id of the core; the Core os_index on kubelet's test
//     maps), SocketID = package, NUMANodeID = the owning NUMA node;
//   - UncoreCacheID = the L3 id, or the socket id when the CPU has no L3 information
//     (kubelet's test maps without L3 objects: 0, their Go zero value);
//   - NumCores = number of cores with a CPU in the map, NumSockets = number of packages,
//     NumNUMANodes / NumUncoreCache = distinct ids in the map.
// Counters a Go test literal sets differently (README of the kubelet test topologies,
// caveats 1 and 2) cannot be recovered from a machine; tests override them explicitly.
CpuTopology FromTopology(const topology::Topology& topology);

}  // namespace topologyd::cpu
