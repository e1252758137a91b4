#include "lib/podresources/pod_resources.h"

#include <map>

#include "fmt/format.h"

namespace topologyd::podresources {
namespace {

std::vector<int64_t> CpuIds(const CpuSet& cpus) {
  std::vector<int64_t> out;
  out.reserve(cpus.Size());
  for (int cpu : cpus) out.push_back(cpu);
  return out;
}

// The entries of one device as the kubelet's containerDevicesFromResourceDeviceInstances
// makes them. A device the policy does not know (cannot happen: the ledger refuses such
// records at start-up, and a reload only adds pools) is shown without topology.
void AddDevice(const admission::NodePolicy& policy, const std::string& resource,
               const std::string& id, std::vector<DeviceEntry>* out) {
  const device::DevicePool* pool = policy.devices.Find(resource);
  const device::Device* device = pool == nullptr ? nullptr : pool->Find(id);
  if (device == nullptr || device->numa_nodes.empty()) {
    out->push_back({.resource_name = resource, .device_id = id, .numa_node = std::nullopt});
    return;
  }
  for (int numa : device->numa_nodes) {
    out->push_back({.resource_name = resource, .device_id = id, .numa_node = numa});
  }
}

// A container's memory blocks. The record lists every NUMA node of a block, with 0 bytes
// where the block took none (docs/admission.md, "Persisted state"), so one resource's nodes
// are its block's affinity and their bytes add up to its size.
std::vector<MemoryBlock> MemoryBlocks(const state::ContainerRecord& c) {
  std::map<std::string, MemoryBlock> by_type;
  for (const auto& [numa, resources] : c.memory) {
    for (const auto& [type, bytes] : resources) {
      MemoryBlock& block = by_type[type];
      block.type = type;
      block.size += bytes;
      block.numa_nodes.push_back(numa);  // ascending: the map is ordered by node
    }
  }
  std::vector<MemoryBlock> out;
  out.reserve(by_type.size());
  for (auto& [type, block] : by_type) out.push_back(std::move(block));
  return out;
}

ContainerResources ContainerOf(const admission::NodePolicy& policy,
                               const state::ContainerRecord& c) {
  ContainerResources out{.name = c.name};
  for (const auto& [resource, ids] : c.devices) {
    for (const std::string& id : ids) AddDevice(policy, resource, id, &out.devices);
  }
  // A shared-pool container's record shows the pool; the kubelet reports exclusive CPUs only.
  if (c.exclusive) out.cpu_ids = CpuIds(c.cpus);
  out.memory = MemoryBlocks(c);
  return out;
}

PodResources PodOf(const admission::NodePolicy& policy, const state::PodRecord& pod) {
  PodResources out{.name = pod.name, .namespace_name = pod.namespace_name};
  for (const state::ContainerRecord& c : pod.containers) {
    if (c.init && c.restartable) out.containers.push_back(ContainerOf(policy, c));
  }
  for (const state::ContainerRecord& c : pod.containers) {
    if (!c.init) out.containers.push_back(ContainerOf(policy, c));
  }
  return out;
}

}  // namespace

std::vector<PodResources> ListPods(const ledger::Allocations& allocations,
                                   const admission::NodePolicy& policy) {
  std::vector<PodResources> out;
  out.reserve(allocations.state.pods.size());
  for (const auto& [uid, pod] : allocations.state.pods) out.push_back(PodOf(policy, pod));
  return out;
}

std::optional<PodResources> FindPod(const ledger::Allocations& allocations,
                                    const admission::NodePolicy& policy,
                                    std::string_view namespace_name, std::string_view name) {
  for (const auto& [uid, pod] : allocations.state.pods) {
    if (pod.namespace_name == namespace_name && pod.name == name) return PodOf(policy, pod);
  }
  return std::nullopt;
}

std::string PodNotFoundMessage(std::string_view namespace_name, std::string_view name) {
  return fmt::format("pod {} in namespace {} not found", name, namespace_name);
}

AllocatableResources Allocatable(const admission::NodePolicy& policy) {
  AllocatableResources out;
  for (const auto& [resource, pool] : policy.devices.pools) {
    for (const device::Device& d : pool.devices) AddDevice(policy, resource, d.id, &out.devices);
  }
  if (policy.cpu) out.cpu_ids = CpuIds(policy.cpu->AllocatableCpus());
  // The kubelet's GetAllocatableMemory: one block per node and type with something to give.
  if (policy.memory_static) {
    for (const auto& [numa, node] : policy.empty_state.memory.machine_state) {
      for (const auto& [type, table] : node.memory_map) {
        if (table.allocatable == 0) continue;
        out.memory.push_back({.type = type, .size = table.allocatable, .numa_nodes = {numa}});
      }
    }
  }
  return out;
}

}  // namespace topologyd::podresources
