// The normative mapping from a node to its Placement provider tree (docs/placement.md, "The
// tree"): what BuildProviderTree() returns is exactly what a sync writes. Pure: the topology
// and the node's reservations in, the tree out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/cpuset/cpuset.h"
#include "lib/device/device_pool.h"
#include "lib/memory/memory_state.h"
#include "lib/placement/provider_tree.h"
#include "lib/topology/topology.h"

namespace topologyd::placement {

// The Placement-only settings (docs/placement.md, "Settings").
struct PlacementOptions {
  std::string node_name;                          // the root's name, prefix of every other name
  std::optional<std::string> root_provider_uuid;  // overrides the root's uuid only
  CpuSet shared_cpus;                             // reported as VCPU; the others as PCPU
  double vcpu_allocation_ratio = 1.0;
  uint64_t base_page_kib = 4;  // 64 on POWER and 64K-page ARM kernels
  friend bool operator==(const PlacementOptions&, const PlacementOptions&) = default;
};

// What the node policy contributes (node_offer_config.h builds it from a configuration).
struct NodeOffer {
  // cpuManagerPolicy static: CPUs may be pinned, so the non-shared ones are PCPU. With policy
  // none nothing can be given exclusively and every CPU is VCPU.
  bool cpus_pinnable = true;
  CpuSet reserved_cpus;                                 // reservedSystemCPUs (or the counted set)
  std::vector<memory::ReservedMemory> reserved_memory;  // bytes per NUMA node and resource
  std::vector<device::PciMatch> device_selectors;       // the `pci` selectors of the device pools
  friend bool operator==(const NodeOffer&, const NodeOffer&) = default;
};

// The tree for `topology`. INVALID_ARGUMENT for settings no Placement would take: an empty or
// over-long node name, a root uuid that is not one, a ratio that is not positive, a base page
// that is not a power of two.
[[nodiscard]] absl::StatusOr<ProviderTree> BuildProviderTree(const topology::Topology& topology,
                                                             const NodeOffer& offer,
                                                             const PlacementOptions& options);

// Names (docs/placement.md): `H_NUMA<n>`, `H_NUMA<n>_PAGE_<size>KB`, `H_<BUSID>`, and the
// device class CUSTOM_PCI_<VENDOR>_<DEVICE> (upper-case hex, four digits each).
std::string NumaProviderName(const std::string& node_name, int numa_id);
std::string PageProviderName(const std::string& node_name, int numa_id, uint64_t size_kib);
std::string DeviceProviderName(const std::string& node_name, const std::string& busid);
std::string PciResourceClass(uint16_t vendor_id, uint16_t device_id);

}  // namespace topologyd::placement
