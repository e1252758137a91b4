// The hwloc half of topology discovery. LoadTopology() (hwloc_source.h) calls ReadMachine();
// the steps are exposed for benchmarks and tests that time or inspect them separately.
//
// ReadMachine() returns what hwloc reports about a source as a MachineDescription, without
// applying any rule; BuildTopology() (topology_builder.h) does the rest. An XML file (the
// configured source, or one HWLOC_XMLFILE names for the live machine) is loaded in a forked
// child, since a malformed file can crash hwloc: the child sends the description back
// (machine_wire.h). LoadHwloc() and DescribeMachine() are the two steps, in this process.
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

// The description of `source`, read as described above. Errors as for LoadTopology(), and
// INVALID_ARGUMENT when hwloc crashed on the XML file.
absl::StatusOr<MachineDescription> ReadMachine(const TopologySource& source);

// Initializes, configures (include disallowed CPUs, keep important I/O devices) and loads an
// hwloc topology from `source`, in this process: an XML file that crashes hwloc takes the
// caller down (use ReadMachine() for files that are not known to be good). Errors as for
// LoadTopology().
absl::StatusOr<HwlocTopologyPtr> LoadHwloc(const TopologySource& source);

// Reads packages, dies, NUMA nodes (memory, page types, subtype), cores, L3 caches, PUs, the
// NUMA latency matrix, PCI devices and the kubelet test-map marker from a loaded topology.
MachineDescription DescribeMachine(hwloc_topology_t topology);

}  // namespace topologyd::topology
