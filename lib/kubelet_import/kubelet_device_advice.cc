#include "lib/kubelet_import/kubelet_device_advice.h"

#include <map>
#include <set>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/common/pci_bus_id.h"

namespace topologyd::state::kubelet {

std::string DevicePoolAdvice(const DeviceCheckpoint& cp) {
  // resource -> device id -> NUMA nodes kubelet recorded it under (-1: no topology).
  std::map<std::string, std::map<std::string, std::set<int64_t>>> resources;
  if (cp.pod_device_entries) {
    for (const PodDevicesEntry& e : *cp.pod_device_entries) {
      if (!e.device_ids) continue;
      for (const auto& [node, ids] : *e.device_ids) {
        if (!ids) continue;
        for (const std::string& id : *ids) {
          std::set<int64_t>& nodes = resources[e.resource_name][id];
          if (node >= 0) nodes.insert(node);
        }
      }
    }
  }
  if (cp.registered_devices) {
    for (const auto& [resource, ids] : *cp.registered_devices) {
      if (!ids) continue;
      for (const std::string& id : *ids) resources[resource][id];
    }
  }
  std::string out;
  for (const auto& [resource, devices] : resources) {
    std::vector<std::string> foreign;
    for (const auto& [id, nodes] : devices) {
      if (!IsPciBusId(id)) foreign.push_back(id);
    }
    if (foreign.empty()) continue;
    out += fmt::format(
        "note: {}: kubelet's device plugin names {} of its devices by ids that are not PCI bus "
        "ids (e.g. {}); a `pci` pool would not hold them and topologyd would refuse to start "
        "on this state. Declare the pool with these ids instead (add numaNode where it is "
        "missing: those devices were registered but not allocated):\n",
        resource, foreign.size(), nlohmann::json(foreign.front()).dump());
    out += fmt::format("  - resourceName: {}\n    devices:\n", nlohmann::json(resource).dump());
    for (const auto& [id, nodes] : devices) {
      std::string where;
      if (nodes.size() == 1) where = fmt::format(", numaNode: {}", *nodes.begin());
      if (nodes.size() > 1) where = fmt::format(", numaNodes: [{}]", fmt::join(nodes, ", "));
      out += fmt::format("      - {{id: {}{}}}\n", nlohmann::json(id).dump(), where);
    }
  }
  return out;
}

}  // namespace topologyd::state::kubelet
