// The hwloc half of topology discovery. LoadTopology() (hwloc_source.h) calls ReadMachine();
// the steps are exposed for benchmarks and tests that time or inspect them separately.
//
// ReadMachine() returns what hwloc reports about a source as a MachineDescription, without
// applying any rule; BuildTopology() (topology_builder.h) does the rest. An XML file (the
// configured source, or one HWLOC_XMLFILE names for the live machine) is loaded in a forked
// child, since a malformed file can crash hwloc: the child sends the description back
// (machine_wire.h), and is killed if it takes longer than a time limit. LoadHwloc() and
// DescribeMachine() are the two steps, in this process.
//
// Thread-safety: an hwloc topology may be read from several threads once loaded, but
// LoadHwloc() results are not shared by this module.
#pragma once

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include <hwloc.h>

#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_builder.h"

namespace topologyd::topology {

struct HwlocTopologyDeleter {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using HwlocTopologyPtr = std::unique_ptr<hwloc_topology, HwlocTopologyDeleter>;

// How long the child may take to load and describe an XML file: a real machine's export takes
// milliseconds, and this is well below systemd's default start-up timeout (90 s).
inline constexpr std::chrono::milliseconds kXmlLoadTimeLimit = std::chrono::seconds(30);

// The description of `source`, read as described above. Errors as for LoadTopology(),
// INVALID_ARGUMENT when hwloc crashed on the XML file, and DEADLINE_EXCEEDED when the child
// did not finish within `time_limit`.
absl::StatusOr<MachineDescription> ReadMachine(
    const TopologySource& source, std::chrono::milliseconds time_limit = kXmlLoadTimeLimit);

// Initializes, configures (include disallowed CPUs, keep important I/O devices) and loads an
// hwloc topology from `source`, in this process: an XML file that crashes hwloc takes the
// caller down (use ReadMachine() for files that are not known to be good). Errors as for
// LoadTopology().
absl::StatusOr<HwlocTopologyPtr> LoadHwloc(const TopologySource& source);

// Reads packages, dies, NUMA nodes (memory, page types, subtype), cores, L3 caches, PUs, the
// NUMA latency matrix, PCI devices and the kubelet test-map marker from a loaded topology.
MachineDescription DescribeMachine(hwloc_topology_t topology);

}  // namespace topologyd::topology
