#include "lib/placement/mapping.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "fmt/format.h"

#include "lib/placement/uuid5.h"

namespace topologyd::placement {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
// Placement's limit on a provider name.
constexpr size_t kMaxNameLength = 200;

int64_t CeilMiB(uint64_t bytes) { return static_cast<int64_t>((bytes + kMiB - 1) / kMiB); }

// reservedMemory[numa].limits[resource] in bytes, 0 when not set.
uint64_t ReservedBytes(const NodeOffer& offer, int numa_id, const std::string& resource) {
  for (const memory::ReservedMemory& r : offer.reserved_memory) {
    if (r.numa_node != numa_id) continue;
    auto it = r.limits.find(resource);
    if (it != r.limits.end()) return it->second;
  }
  return 0;
}

Inventory MakeInventory(int64_t total, int64_t reserved, int64_t step, double ratio) {
  return Inventory{.total = total,
                   .reserved = std::min(reserved, total),
                   .min_unit = step,
                   .max_unit = total,
                   .step_size = step,
                   .allocation_ratio = ratio};
}

Provider MakeProvider(std::string name, const std::string& parent_uuid) {
  Provider p;
  p.uuid = ProviderUuid(name);
  p.name = std::move(name);
  p.parent_uuid = parent_uuid;
  return p;
}

absl::Status CheckOptions(const PlacementOptions& options) {
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError("placement nodeName: must not be empty");
  }
  if (options.node_name.size() > kMaxNameLength - 40) {
    // The longest derived name adds "_NUMA<id>_PAGE_<size>KB" or a bus id; keep room for it.
    return absl::InvalidArgumentError(
        fmt::format("placement nodeName: \"{}\" is longer than {} characters", options.node_name,
                    kMaxNameLength - 40));
  }
  if (options.root_provider_uuid.has_value() && !ParseUuid(*options.root_provider_uuid)) {
    return absl::InvalidArgumentError(fmt::format(
        "placement rootProviderUUID: \"{}\" is not a uuid", *options.root_provider_uuid));
  }
  if (!(options.vcpu_allocation_ratio > 0) || !std::isfinite(options.vcpu_allocation_ratio)) {
    return absl::InvalidArgumentError(
        fmt::format("placement vcpuAllocationRatio: {} is not a positive number",
                    options.vcpu_allocation_ratio));
  }
  const uint64_t page = options.base_page_kib;
  if (page == 0 || (page & (page - 1)) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("placement basePageKiB: {} is not a power of two", page));
  }
  return absl::OkStatus();
}

void AddCpuInventory(const topology::NumaNode& node, const NodeOffer& offer,
                     const PlacementOptions& options, Provider* numa) {
  const CpuSet shared =
      offer.cpus_pinnable ? node.cpus.Intersection(options.shared_cpus) : node.cpus;
  const CpuSet pinnable = node.cpus.Difference(shared);
  if (pinnable.Size() >= 1) {
    numa->inventories[kPcpu] =
        MakeInventory(pinnable.Size(), pinnable.IntersectionSize(offer.reserved_cpus), 1, 1.0);
  }
  if (shared.Size() >= 1) {
    numa->inventories[kVcpu] =
        MakeInventory(shared.Size(), shared.IntersectionSize(offer.reserved_cpus), 1,
                      options.vcpu_allocation_ratio);
  }
}

// The page-size children of one NUMA provider, base pages first, then huge pages ascending.
void AddPageProviders(const topology::NumaNode& node, const NodeOffer& offer,
                      const PlacementOptions& options, const Provider& numa, ProviderTree* tree) {
  const std::string& host = options.node_name;
  uint64_t huge_bytes = 0;
  for (const topology::HugePages& h : node.hugepages) huge_bytes += h.size_kib * 1024 * h.count;
  const uint64_t base_bytes = node.memory_bytes > huge_bytes ? node.memory_bytes - huge_bytes : 0;
  const auto base_total = static_cast<int64_t>(base_bytes / kMiB);
  if (base_total >= 1) {
    Provider p = MakeProvider(PageProviderName(host, node.id, options.base_page_kib), numa.uuid);
    p.inventories[kMemoryMb] =
        MakeInventory(base_total, CeilMiB(ReservedBytes(offer, node.id, "memory")), 1, 1.0);
    const std::string size_trait = fmt::format("CUSTOM_MEMORY_PAGE_SIZE_{}", options.base_page_kib);
    p.traits = {kTraitPageSmall, size_trait};
    tree->custom_traits.insert({kTraitPageSmall, size_trait});
    tree->providers.push_back(std::move(p));
  }
  for (const topology::HugePages& h : node.hugepages) {
    // MEMORY_MB with an integer step cannot express a page that is not whole MiB.
    if (h.count < 1 || h.size_kib % 1024 != 0) continue;
    const auto step = static_cast<int64_t>(h.size_kib / 1024);
    const auto total = static_cast<int64_t>(h.count) * step;
    Provider p = MakeProvider(PageProviderName(host, node.id, h.size_kib), numa.uuid);
    const uint64_t reserved =
        ReservedBytes(offer, node.id, memory::HugePageResourceName(h.size_kib));
    p.inventories[kMemoryMb] = MakeInventory(total, CeilMiB(reserved), step, 1.0);
    const std::string size_trait = fmt::format("CUSTOM_MEMORY_PAGE_SIZE_{}", h.size_kib);
    p.traits = {kTraitPageLarge, size_trait};
    tree->custom_traits.insert({kTraitPageLarge, size_trait});
    tree->providers.push_back(std::move(p));
  }
}

bool Selected(const NodeOffer& offer, const topology::PciDevice& dev) {
  return std::any_of(offer.device_selectors.begin(), offer.device_selectors.end(),
                     [&dev](const device::PciMatch& m) { return device::Matches(m, dev); });
}

}  // namespace

const Provider* ProviderTree::FindByUuid(const std::string& uuid) const {
  for (const Provider& p : providers) {
    if (p.uuid == uuid) return &p;
  }
  return nullptr;
}

std::string NumaProviderName(const std::string& node_name, int numa_id) {
  return fmt::format("{}_NUMA{}", node_name, numa_id);
}

std::string PageProviderName(const std::string& node_name, int numa_id, uint64_t size_kib) {
  return fmt::format("{}_PAGE_{}KB", NumaProviderName(node_name, numa_id), size_kib);
}

std::string DeviceProviderName(const std::string& node_name, const std::string& busid) {
  std::string upper = busid;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return node_name + "_" + upper;
}

std::string PciResourceClass(uint16_t vendor_id, uint16_t device_id) {
  return fmt::format("CUSTOM_PCI_{:04X}_{:04X}", vendor_id, device_id);
}

absl::StatusOr<ProviderTree> BuildProviderTree(const topology::Topology& topology,
                                               const NodeOffer& offer,
                                               const PlacementOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  ProviderTree tree;
  Provider root;
  root.name = options.node_name;
  root.uuid = options.root_provider_uuid ? UuidText(*ParseUuid(*options.root_provider_uuid))
                                         : ProviderUuid(options.node_name);
  tree.providers.push_back(root);

  for (const topology::NumaNode& node : topology.numa_nodes) {
    Provider numa = MakeProvider(NumaProviderName(options.node_name, node.id), root.uuid);
    numa.traits = {kTraitNumaRoot};
    AddCpuInventory(node, offer, options, &numa);
    tree.providers.push_back(numa);
    AddPageProviders(node, offer, options, numa, &tree);
  }

  for (const topology::PciDevice& dev : topology.pci_devices) {
    if (!Selected(offer, dev)) continue;
    // Only a device local to exactly one NUMA node has a NUMA parent; one local to several
    // (sub-NUMA clustering) or to none hangs off the root.
    std::string parent = root.uuid;
    if (dev.numa_nodes.size() == 1) {
      parent = ProviderUuid(NumaProviderName(options.node_name, dev.numa_nodes[0]));
      if (topology.FindNuma(dev.numa_nodes[0]) == nullptr) parent = root.uuid;
    }
    Provider p = MakeProvider(DeviceProviderName(options.node_name, dev.busid), parent);
    const std::string rc = PciResourceClass(dev.vendor_id, dev.device_id);
    p.inventories[rc] = MakeInventory(1, 0, 1, 1.0);
    p.traits = {kTraitPciDevice};
    tree.custom_resource_classes.insert(rc);
    tree.providers.push_back(std::move(p));
  }
  return tree;
}

}  // namespace topologyd::placement
