#include "lib/device/device_pool.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"

#include "lib/common/status_macros.h"
#include "lib/pod/names.h"

namespace topologyd::device {
namespace {

absl::Status PoolError(size_t index, std::string_view resource, std::string_view message) {
  return absl::InvalidArgumentError(
      fmt::format("devices[{}] (resourceName \"{}\"): {}", index, resource, message));
}

Device MakeDevice(std::string id, std::vector<int> numa_ids, const hints::NumaIndex& numa) {
  std::sort(numa_ids.begin(), numa_ids.end());
  numa_ids.erase(std::unique(numa_ids.begin(), numa_ids.end()), numa_ids.end());
  Device d;
  d.id = std::move(id);
  uint64_t bits = 0;
  for (int node : numa_ids) {
    // Nodes the topology does not know (unlikely from hwloc) are dropped, so a device's mask
    // and its id list always agree.
    const int pos = numa.Position(node);
    if (pos < 0 || pos >= hints::NumaMask::kMaxNodes) continue;
    bits |= uint64_t{1} << pos;
    d.numa_nodes.push_back(node);
  }
  d.numa_mask = hints::NumaMask(bits);
  return d;
}

}  // namespace

bool DevicePool::TopologyAware() const {
  return std::any_of(devices.begin(), devices.end(),
                     [](const Device& d) { return !d.numa_nodes.empty(); });
}

const Device* DevicePool::Find(std::string_view id) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const Device& d, std::string_view v) { return d.id < v; });
  return it != devices.end() && it->id == id ? &*it : nullptr;
}

const DevicePool* DeviceInventory::Find(std::string_view resource) const {
  auto it = pools.find(resource);
  return it == pools.end() ? nullptr : &it->second;
}

bool Matches(const PciMatch& match, const topology::PciDevice& dev) {
  if (match.vendor && *match.vendor != dev.vendor_id) return false;
  if (match.device && *match.device != dev.device_id) return false;
  if (match.class_id && *match.class_id != dev.class_id) return false;
  return match.virtual_functions == dev.physfn_busid.has_value();
}

absl::Status ValidateDevicePools(const std::vector<DevicePoolConfig>& pools,
                                 const topology::Topology& topology) {
  std::set<std::string> resources;
  std::map<std::string, size_t> owner;  // device id -> pool index
  for (size_t i = 0; i < pools.size(); ++i) {
    const DevicePoolConfig& pool = pools[i];
    if (!pod::IsDevicePluginResourceName(pool.resource_name)) {
      return PoolError(i, pool.resource_name,
                       "not an extended resource name (want <domain>/<name> outside "
                       "kubernetes.io, e.g. nvidia.com/gpu: a DNS subdomain, then a name of up "
                       "to 63 letters, digits, '-', '_' or '.' that starts and ends with a "
                       "letter or digit)");
    }
    if (!resources.insert(pool.resource_name).second) {
      return PoolError(i, pool.resource_name, "resource configured twice");
    }
    if (!pool.pci && pool.devices.empty()) {
      return PoolError(i, pool.resource_name, "needs `pci` or `devices`");
    }
    if (pool.pci && !pool.devices.empty()) {
      return PoolError(i, pool.resource_name, "set either `pci` or `devices`, not both");
    }
    auto claim = [&](const std::string& id) -> absl::Status {
      auto [it, inserted] = owner.emplace(id, i);
      if (!inserted) {
        return PoolError(i, pool.resource_name,
                         it->second == i
                             ? fmt::format("device \"{}\" listed twice", id)
                             : fmt::format("device \"{}\" is already in devices[{}] (\"{}\")", id,
                                           it->second, pools[it->second].resource_name));
      }
      return absl::OkStatus();
    };
    if (pool.pci) {
      if (!pool.pci->vendor && !pool.pci->device && !pool.pci->class_id) {
        return PoolError(i, pool.resource_name, "pci: set at least one of vendor, device, class");
      }
      for (const topology::PciDevice& dev : topology.pci_devices) {
        if (Matches(*pool.pci, dev)) TOPOLOGYD_RETURN_IF_ERROR(claim(dev.busid));
      }
    }
    for (const ExplicitDevice& dev : pool.devices) {
      if (dev.id.empty()) return PoolError(i, pool.resource_name, "device with an empty id");
      TOPOLOGYD_RETURN_IF_ERROR(claim(dev.id));
      for (int numa : dev.numa_nodes) {
        if (topology.FindNuma(numa) == nullptr) {
          return PoolError(i, pool.resource_name,
                           fmt::format("device \"{}\": NUMA node {} does not exist", dev.id, numa));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceInventory> BuildDeviceInventory(const std::vector<DevicePoolConfig>& pools,
                                                     const topology::Topology& topology,
                                                     const hints::NumaIndex& numa) {
  TOPOLOGYD_RETURN_IF_ERROR(ValidateDevicePools(pools, topology));
  DeviceInventory inventory;
  inventory.numa_count = numa.size();
  for (const DevicePoolConfig& config : pools) {
    DevicePool pool;
    pool.resource_name = config.resource_name;
    if (config.pci) {
      for (const topology::PciDevice& dev : topology.pci_devices) {
        if (Matches(*config.pci, dev)) {
          pool.devices.push_back(MakeDevice(dev.busid, dev.numa_nodes, numa));
        }
      }
    }
    for (const ExplicitDevice& dev : config.devices) {
      pool.devices.push_back(MakeDevice(dev.id, dev.numa_nodes, numa));
    }
    std::sort(pool.devices.begin(), pool.devices.end(),
              [](const Device& a, const Device& b) { return a.id < b.id; });
    inventory.pools.emplace(pool.resource_name, std::move(pool));
  }
  return inventory;
}

}  // namespace topologyd::device
