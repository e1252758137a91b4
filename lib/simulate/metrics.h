// The measures a simulation reports, as pure functions of the node policy, what containers
// were given and the free pools at the end. docs/simulate.md defines each for operators.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/admission/node_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/ledger/ledger.h"
#include "lib/pod/pod.h"
#include "lib/state/state.h"

namespace topologyd::simulate {

// Where one admitted container sits.
struct Placement {
  // Holds something pinned to NUMA nodes: exclusive CPUs, memory blocks or devices with a
  // locality. A container in the shared pool with nothing else has no placement to judge.
  bool pinned = false;
  int nodes = 0;   // NUMA nodes its exclusive CPUs, memory and devices touch together
  int fewest = 0;  // the fewest NUMA nodes that could hold the same amounts (FewestNodes)
};

// The NUMA nodes (OS ids) of `c`'s exclusive CPUs, memory blocks and devices, and the fewest
// that could hold them.
Placement PlacementOf(const admission::NodePolicy& node, const state::ContainerRecord& c);

// The fewest NUMA nodes of the empty machine that could hold `cpus` exclusive CPUs, the bytes of
// `memory` per resource and the devices of `devices` per resource, each resource counted on
// its own: per resource, the nodes with the most capacity are taken until the request fits,
// and the answer is the largest of those counts. A lower bound of what any placement needs
// (the resources need not fit on the same nodes); 0 for an empty request. Capacity: a node's
// CPUs less the reserved ones; its allocatable memory of the resource (memoryManagerPolicy
// Static only; without it memory is not placed and does not count); its devices of the pool.
int FewestNodes(const admission::NodePolicy& node, int cpus,
                const std::map<std::string, uint64_t>& memory,
                const std::map<std::string, int>& devices);

// The most common value of `sizes` (the smallest of the most common when several tie); 0 for
// none.
uint64_t MostCommon(const std::vector<uint64_t>& sizes);

// Free amounts per NUMA node that cannot serve one more container of `unit` on one node: the
// sum over the nodes of (free mod unit). 0 when unit is 0.
uint64_t Stranded(const std::vector<uint64_t>& free_per_node, uint64_t unit);

// What a Guaranteed container of the workload asks per resource, for the "most common size":
// exclusive CPUs (whole-CPU requests of Guaranteed pods: what the static policy pins), memory
// and each hugepage size. Regular init containers, which exit, are left out.
struct WorkloadSizes {
  std::vector<uint64_t> cpus;
  std::map<std::string, std::vector<uint64_t>> memory;  // "memory", "hugepages-2Mi", ...
};
void AddSizes(const pod::Pod& pod, WorkloadSizes& sizes);

// One resource's end state over the machine.
struct FreeAmount {
  std::string resource;  // "cpu", "memory", "hugepages-1Gi", ...
  uint64_t free = 0;     // CPUs or bytes
  uint64_t unit = 0;     // the workload's most common Guaranteed size; 0 = none in the workload
  uint64_t stranded = 0;
};

// One NUMA node at the end, for the occupancy bars.
struct NumaOccupancy {
  int numa_id = 0;
  CpuSet cpus;                                         // the node's CPUs; empty for a CPU-less node
  CpuSet exclusive_cpus;                               // of those, held exclusively by a container
  CpuSet reserved_cpus;                                // of those, reserved
  std::map<std::string, uint64_t> memory_allocatable;  // memoryManagerPolicy Static only
  std::map<std::string, uint64_t> memory_used;
};

// The free CPUs (the shared pool less reserved CPUs: what a Guaranteed container could still
// be given exclusively; only with cpuManagerPolicy static) and, with memoryManagerPolicy
// Static, free memory and hugepages per resource (those with something allocatable), each with its
// stranded part for the workload's most common size; and the per-node occupancy.
struct EndState {
  std::vector<FreeAmount> free;
  std::vector<NumaOccupancy> numa;
};
EndState MeasureEnd(const admission::NodePolicy& node, const ledger::Ledger& ledger,
                    const WorkloadSizes& sizes);

}  // namespace topologyd::simulate
