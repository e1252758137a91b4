// The hwloc half of topology discovery, exposed for benchmarks and tests that need to time
// or inspect the two steps separately; everything else calls LoadTopology() (hwloc_source.h).
//
// LoadHwloc() returns an owned, loaded hwloc topology (destroyed by the smart pointer on
// every path). DescribeMachine() copies what the model needs out of it into a
// MachineDescription without applying any rule; BuildTopology() (topology_builder.h) does
// the rest.
//
// Thread-safety: an hwloc topology may be read from several threads once loaded, but
// LoadHwloc() results are not shared by this module.
#pragma once

#include <hwloc.h>

#include <memory>

#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_builder.h"

#include "absl/status/statusor.h"

namespace topologyd::topology {

struct HwlocTopologyDeleter {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using HwlocTopologyPtr = std::unique_ptr<hwloc_topology, HwlocTopologyDeleter>;

// Initializes, configures (include disallowed CPUs, keep important I/O devices) and loads an
// hwloc topology from `source`. Errors as for LoadTopology().
absl::StatusOr<HwlocTopologyPtr> LoadHwloc(const TopologySource& source);

// Reads packages, dies, NUMA nodes (memory, page types, subtype), cores, L3 caches, PUs, the
// NUMA latency matrix, PCI devices and the kubelet test-map marker from a loaded topology.
MachineDescription DescribeMachine(hwloc_topology_t topology);

}  // namespace topologyd::topology
