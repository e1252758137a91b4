#include "lib/device/device_allocator.h"

#include <algorithm>
#include <set>
#include <utility>

#include "fmt/format.h"

#include "lib/device/device_hints.h"

namespace topologyd::device {

absl::StatusOr<DeviceState> Allocate(const DeviceInventory& inventory, DeviceState state,
                                     const pod::Pod& pod, std::string_view container_name,
                                     const hints::TopologyHint& affinity) {
  const pod::Container* container = pod::FindContainer(pod, container_name);
  if (container == nullptr) {
    return absl::NotFoundError(
        fmt::format("pod \"{}\" has no container \"{}\"", pod.uid, container_name));
  }
  return Allocate(inventory, std::move(state), pod, *container, affinity);
}

absl::StatusOr<DeviceState> Allocate(const DeviceInventory& inventory, DeviceState state,
                                     const pod::Pod& pod, const pod::Container& container,
                                     const hints::TopologyHint& affinity) {
  const std::string_view container_name = container.name;
  DeviceState& next = state;
  for (const auto& [resource, quantity] : container.limits) {
    const DevicePool* pool = inventory.Find(resource);
    if (pool == nullptr) continue;
    const int64_t required = quantity.Value();
    int64_t needed = required;
    const std::vector<std::string> held =
        ContainerDeviceIds(next, pod.uid, container_name, resource);
    if (!held.empty()) {
      needed -= static_cast<int64_t>(held.size());
      if (needed != 0) {
        return absl::FailedPreconditionError(fmt::format(
            "pod \"{}\" container \"{}\" changed request for resource \"{}\" from {} to {}",
            pod.uid, container_name, resource, held.size(), required));
      }
    }
    if (pool->devices.empty()) {
      return absl::FailedPreconditionError(fmt::format(
          "no healthy devices present; cannot allocate unhealthy devices {}", resource));
    }
    for (const std::string& id : held) {
      if (pool->Find(id) == nullptr) {
        return absl::FailedPreconditionError(fmt::format(
            "previously allocated devices are no longer healthy; cannot allocate unhealthy "
            "devices {}",
            resource));
      }
    }
    if (needed <= 0) continue;

    std::vector<std::string> chosen;
    auto take_from = [&](const std::vector<std::string>& ids) {
      for (const std::string& id : ids) {
        if (needed == 0) return true;
        if (std::find(chosen.begin(), chosen.end(), id) != chosen.end()) continue;
        chosen.push_back(id);
        --needed;
      }
      return needed == 0;
    };

    const std::set<std::string> reusable_set = ReusableDevices(next, pod, container, resource);
    std::vector<std::string> reusable;
    for (const Device& d : pool->devices) {
      if (reusable_set.contains(d.id)) reusable.push_back(d.id);
    }
    if (!take_from(reusable)) {
      const std::set<std::string> in_use = DevicesInUse(next, resource);
      std::vector<std::string> aligned, unaligned, no_affinity;
      size_t available = 0;
      const bool use_affinity = pool->TopologyAware() && affinity.affinity.has_value();
      for (const Device& d : pool->devices) {
        if (in_use.contains(d.id)) continue;
        ++available;
        if (!use_affinity || d.numa_nodes.empty()) {
          no_affinity.push_back(d.id);
        } else if (!d.numa_mask.And(*affinity.affinity).IsEmpty()) {
          aligned.push_back(d.id);
        } else {
          unaligned.push_back(d.id);
        }
      }
      if (static_cast<int64_t>(available) < needed) {
        return absl::FailedPreconditionError(fmt::format(
            "requested number of devices unavailable for {}. Requested: {}, Available: {}",
            resource, needed, available));
      }
      if (needed < static_cast<int64_t>(aligned.size())) {
        take_from(aligned);
      } else if (!take_from(aligned) && !take_from(unaligned)) {
        take_from(no_affinity);
      }
    }
    std::vector<std::string> ids = held;
    ids.insert(ids.end(), chosen.begin(), chosen.end());
    std::sort(ids.begin(), ids.end());
    next.pods[pod.uid][std::string(container_name)][resource] = std::move(ids);
  }
  return state;
}

}  // namespace topologyd::device
