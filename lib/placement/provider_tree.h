// ProviderTree: the resource-provider tree topologyd publishes to OpenStack Placement for one
// node (docs/placement.md): a root named after the node, one child per NUMA node with its CPUs,
// one grandchild per memory page size, and one provider per selected PCI device. A plain value,
// built by BuildProviderTree() (mapping.h) and compared by the sync planner (sync_plan.h) with
// what a Placement service holds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace topologyd::placement {

// One inventory record, always written with all six fields: a field left out would get
// Placement's default, and the default max_unit (2^31-1) would let one allocation take a whole
// over-committed pool.
struct Inventory {
  int64_t total = 0;
  int64_t reserved = 0;
  int64_t min_unit = 1;
  int64_t max_unit = 0;
  int64_t step_size = 1;
  double allocation_ratio = 1.0;
  friend bool operator==(const Inventory&, const Inventory&) = default;
};

struct Provider {
  std::string name;
  std::string uuid;                              // lower-case, hyphenated
  std::optional<std::string> parent_uuid;        // nullopt for the root
  std::map<std::string, Inventory> inventories;  // by resource class
  std::set<std::string> traits;
  friend bool operator==(const Provider&, const Provider&) = default;
};

struct ProviderTree {
  // Parents before their children (the creation order); providers[0] is the root.
  std::vector<Provider> providers;
  // The CUSTOM_ classes and traits the tree uses, which must exist before it is written.
  std::set<std::string> custom_resource_classes;
  std::set<std::string> custom_traits;

  const Provider& root() const { return providers.front(); }
  const Provider* FindByUuid(const std::string& uuid) const;
  friend bool operator==(const ProviderTree&, const ProviderTree&) = default;
};

// Resource classes and traits of the tree (docs/placement.md, "Classes and traits").
inline constexpr char kPcpu[] = "PCPU";
inline constexpr char kVcpu[] = "VCPU";
inline constexpr char kMemoryMb[] = "MEMORY_MB";
inline constexpr char kTraitNumaRoot[] = "HW_NUMA_ROOT";
inline constexpr char kTraitPageSmall[] = "CUSTOM_MEMORY_PAGE_SIZE_SMALL";
inline constexpr char kTraitPageLarge[] = "CUSTOM_MEMORY_PAGE_SIZE_LARGE";
inline constexpr char kTraitPciDevice[] = "COMPUTE_MANAGED_PCI_DEVICE";

}  // namespace topologyd::placement
