// Topology: an immutable, plain-value description of one machine — packages, dies, NUMA
// nodes (with memory, hugepages, distances, and CPU-less memory-only nodes), cores,
// logical CPUs, L3 ("uncore") groups and PCI devices with their NUMA locality.
//
// It carries everything the CPU, memory and device policies need and nothing of hwloc:
// the hwloc adapter (hwloc_source.h) builds it, the pure modules only read it. Ids are
// OS indexes (PU os_index for CPUs, NUMANode os_index for NUMA nodes, ...), so they may be
// sparse and need not start at 0. Every vector is sorted by id.
//
// Thread-safety: immutable after construction; share it as `std::shared_ptr<const Topology>`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/cpuset/cpuset.h"

namespace topologyd::topology {

struct HugePages {
  uint64_t size_kib = 0;  // page size, e.g. 2048 or 1048576
  uint64_t count = 0;     // pages of this size hwloc reports for the node
  friend bool operator==(const HugePages&, const HugePages&) = default;
};

struct NumaNode {
  int id = 0;                 // OS index (sparse ids are legal: 0,1,2,33,...)
  CpuSet cpus;                // empty for CPU-less (memory-only) nodes: HBM, MCDRAM, GPU memory
  uint64_t memory_bytes = 0;  // local memory
  std::vector<HugePages> hugepages;  // sizes other than the base page, ascending size
  std::vector<uint32_t> distances;   // row of the distance matrix, in Topology::numa_nodes order;
                                     // empty when the machine reports no distances
  friend bool operator==(const NumaNode&, const NumaNode&) = default;
};

struct Package {
  int id = 0;  // OS index
  CpuSet cpus;
  friend bool operator==(const Package&, const Package&) = default;
};

struct Die {
  int id = 0;          // OS index
  int package_id = 0;  // containing package
  CpuSet cpus;
  friend bool operator==(const Die&, const Die&) = default;
};

struct Core {
  // kubelet's CoreID: the hwloc Core os_index when those are unique machine-wide or the
  // source is one of kubelet's test maps; otherwise the lowest CPU id of the core.
  // See docs/topology.md for the exact rule.
  int id = 0;
  int package_id = 0;
  CpuSet cpus;
  friend bool operator==(const Core&, const Core&) = default;
};

struct L3Group {
  int id = 0;  // uncore cache id (L3Cache os_index, or sysfs cache id)
  CpuSet cpus;
  friend bool operator==(const L3Group&, const L3Group&) = default;
};

// One logical CPU and the groups it belongs to. -1 means "none" (e.g. a CPU on a
// memory-less die belongs to no NUMA node; a machine without L3 info has no l3 id).
struct Cpu {
  int id = 0;
  int core_id = 0;
  int package_id = 0;
  int die_id = -1;
  int numa_id = -1;
  int l3_id = -1;
  friend bool operator==(const Cpu&, const Cpu&) = default;
};

enum class DeviceKind { kGpu, kNetwork, kStorage, kAccelerator, kOther };

struct PciDevice {
  std::string busid;  // "0000:3b:00.0"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;  // PCI class+subclass, e.g. 0x0302
  DeviceKind kind = DeviceKind::kOther;
  std::vector<int> numa_nodes;  // NUMA nodes the device is local to; empty when unknown
  // SR-IOV: set on a virtual function, naming its physical function's bus id.
  std::optional<std::string> physfn_busid;
  friend bool operator==(const PciDevice&, const PciDevice&) = default;
};

struct Topology {
  std::vector<Package> packages;
  std::vector<Die> dies;  // empty when hwloc reports none
  std::vector<NumaNode> numa_nodes;
  std::vector<Core> cores;
  std::vector<Cpu> cpus;
  std::vector<L3Group> l3_groups;
  std::vector<PciDevice> pci_devices;
  friend bool operator==(const Topology&, const Topology&) = default;
};

}  // namespace topologyd::topology
