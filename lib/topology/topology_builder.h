// MachineDescription and BuildTopology(): the hwloc-free half of topology discovery.
//
// The hwloc adapter (hwloc_reader.h) copies what hwloc reports into a MachineDescription —
// plain objects with their OS indexes and CPU sets, nothing decided yet. BuildTopology()
// then applies every rule that turns that into the Topology model: which NUMA node owns a
// CPU, kubelet's core and uncore ids, device locality and kinds, distance rows. Keeping the
// rules here makes them testable with hand-written machines and no hwloc.
//
// Pure functions and plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/cpuset/cpuset.h"
#include "lib/topology/topology.h"

namespace topologyd::topology {

// An hwloc object reduced to its OS index (kUnknownIndex when hwloc has none) and CPUs.
struct ObjectDescription {
  static constexpr int kUnknownIndex = -1;
  int os_index = kUnknownIndex;
  CpuSet cpus;
  bool operator==(const ObjectDescription&) const = default;
};

struct PageType {
  uint64_t size_bytes = 0;
  uint64_t count = 0;
  bool operator==(const PageType&) const = default;
};

struct NumaDescription {
  int os_index = 0;
  CpuSet cpus;  // hwloc's cpuset: memory-only nodes often repeat their CPU node's CPUs
  uint64_t memory_bytes = 0;
  std::vector<PageType> page_types;  // as hwloc lists them, base page included
  std::string subtype;
  bool operator==(const NumaDescription&) const = default;
};

struct PciDescription {
  std::string busid;
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;
  bool has_gpu_os_device = false;  // hwloc attached a GPU OS device (e.g. rsmi, nvml) to it
  CpuSet locality;                 // CPUs of the closest non-I/O ancestor
  bool attached_to_root = false;   // that ancestor is the Machine: firmware gave no locality
  std::optional<std::string> physfn_busid;  // SR-IOV virtual function: its physical function
  bool operator==(const PciDescription&) const = default;
};

struct MachineDescription {
  CpuSet pus;  // every PU
  std::vector<ObjectDescription> packages;
  std::vector<ObjectDescription> dies;
  std::vector<NumaDescription> numa_nodes;
  std::vector<ObjectDescription> cores;
  std::vector<ObjectDescription> l3_caches;
  // One NUMA distance matrix, row-major over `distance_node_ids` (NUMA OS indexes); both
  // empty when the machine reports none.
  std::vector<int> distance_node_ids;
  std::vector<uint64_t> distance_values;
  std::vector<PciDescription> pci_devices;
  bool kubelet_test_map = false;
  bool operator==(const MachineDescription&) const = default;
};

// Applies the model rules (see topology.h and docs/topology.md). INVALID_ARGUMENT when the
// description cannot be a machine: no PUs, a PU in two or no packages while packages exist,
// duplicate package or NUMA ids, a distance matrix whose size does not match its node list.
absl::StatusOr<Topology> BuildTopology(const MachineDescription& machine);

// The coarse kind of a PCI function from its class (class << 8 | subclass): display 0x03xx is
// a GPU, as is a processing accelerator 0x12xx that carries a GPU OS device (MI300A);
// 0x02xx network and 0x0c06 InfiniBand are network; 0x01xx mass storage is storage;
// other 0x12xx and co-processors 0x0b40 are accelerators; everything else is other.
DeviceKind ClassifyPciDevice(uint16_t class_id, bool has_gpu_os_device);

}  // namespace topologyd::topology
