// Topology: an immutable, plain-value description of one machine — packages, dies, NUMA
// nodes (with memory, hugepages, distances, and CPU-less memory-only nodes), cores,
// logical CPUs, L3 ("uncore") groups and PCI devices with their NUMA locality.
//
// It carries everything the CPU, memory and device policies need and nothing of hwloc:
// the hwloc adapter (hwloc_source.h) builds it, the pure modules only read it. Ids are
// OS indexes (PU os_index for CPUs, NUMANode os_index for NUMA nodes, ...), so they may be
// sparse and need not start at 0. Every vector is sorted by id (dies by (package_id, id),
// cores by (id, package_id), PCI devices by bus id).
//
// Id rules (docs/topology.md has the full derivation from hwloc):
//   - A CPU belongs to the NUMA node with the smallest cpuset containing it (ties: lowest OS
//     index), so memory-only nodes that share a CPU node's cpuset in hwloc (HBM, MCDRAM, GPU
//     memory) come out CPU-less.
//   - Core id: kubelet's CoreID, i.e. the lowest CPU id of the core (unique machine-wide). On
//     kubelet's CPU-manager test maps (`kubelet_test_map`) it is the hwloc Core os_index, which
//     those maps may reuse across packages.
//   - L3 id: the L3Cache os_index when every L3 has a distinct one, else the lowest CPU id of
//     the L3. On kubelet test maps without L3 objects every CPU has l3_id 0 (kubelet's zero
//     value) and `l3_groups` is empty.
//
// Thread-safety: immutable after construction; share it as `std::shared_ptr<const Topology>`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  std::string subtype;  // hwloc subtype when recorded: "MCDRAM", "HBM", "GPUMemory", ...; or ""
  friend bool operator==(const NumaNode&, const NumaNode&) = default;
};

struct Package {
  int id = 0;  // OS index
  CpuSet cpus;
  friend bool operator==(const Package&, const Package&) = default;
};

struct Die {
  int id = 0;          // OS index; Linux numbers dies per package, so key dies by (package_id, id)
  int package_id = 0;  // containing package
  CpuSet cpus;
  friend bool operator==(const Die&, const Die&) = default;
};

struct Core {
  // kubelet's CoreID: the lowest CPU id of the core; on kubelet test maps the hwloc Core
  // os_index (which may repeat in two packages: Topology::cores then has one entry per
  // (id, package_id) pair). See docs/topology.md.
  int id = 0;
  int package_id = 0;
  CpuSet cpus;
  friend bool operator==(const Core&, const Core&) = default;
};

struct L3Group {
  int id = 0;  // uncore cache id: L3Cache os_index (= sysfs cache id), else lowest CPU id
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

// "gpu", "network", "storage", "accelerator", "other" (the JSON spelling).
std::string_view DeviceKindName(DeviceKind kind);

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
  std::vector<Die> dies;  // empty when hwloc reports none; sorted by (package_id, id)
  std::vector<NumaNode> numa_nodes;
  std::vector<Core> cores;  // sorted by (id, package_id)
  std::vector<Cpu> cpus;
  std::vector<L3Group> l3_groups;
  std::vector<PciDevice> pci_devices;  // sorted by bus id
  // True when the source is one of kubelet's CPU-manager test topologies (the hwloc Machine
  // carries info Backend=kubelet-cpumanager-test-topology). The ids then follow those maps'
  // conventions (see above), and the CPU policy must reproduce the caveats of
  // topologies/kubelet-test/README.md (e.g. uncore id 0 for every CPU without L3 objects).
  bool kubelet_test_map = false;

  // Lookups by OS index; nullptr / -1 when absent. Linear or binary search over the sorted
  // vectors: cheap enough for the few thousand entries of the largest machines.
  const NumaNode* FindNuma(int id) const;
  const Cpu* FindCpu(int id) const;
  const Package* FindPackage(int id) const;
  // Every CPU of the machine.
  CpuSet AllCpus() const;
  // NUMA distance between two nodes, or nullopt when either is absent or distances are unknown.
  std::optional<uint32_t> Distance(int from_numa, int to_numa) const;

  friend bool operator==(const Topology&, const Topology&) = default;
};

// The value hwloc-free code uses for the XML marker of kubelet's test maps.
inline constexpr std::string_view kKubeletTestMapBackend = "kubelet-cpumanager-test-topology";

}  // namespace topologyd::topology
