// What a machine picture shows of a node's allocations: the reserved CPUs, the shared pool
// and, per pod, its exclusive CPUs, memory nodes and devices. Built by the caller from
// whatever holds the allocations (the daemon's ListAllocations reply, a state file) so the
// renderer depends on neither.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/cpuset/cpuset.h"

namespace topologyd::picture {

struct ContainerDrawing {
  std::string name;
  CpuSet exclusive_cpus;  // empty for a shared-pool container
  std::vector<int> memory_numa;
  std::vector<std::pair<std::string, std::string>> devices;  // (resource, device id)
};

struct PodDrawing {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::vector<ContainerDrawing> containers;
};

struct AllocationsDrawing {
  CpuSet reserved;
  CpuSet shared_pool;
  std::vector<PodDrawing> pods;  // drawn in this order; pod i gets style i (palette.h)
};

}  // namespace topologyd::picture
