#include "lib/nrt/node_resource_topology.h"

#include <algorithm>
#include <map>
#include <set>

#include "fmt/format.h"

#include "lib/nrt/pod_fingerprint.h"

namespace topologyd::nrt {
namespace {

std::string ZoneName(int numa_id) { return fmt::format("node-{}", numa_id); }

int64_t Signed(uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); }

int64_t Minus(int64_t allocatable, int64_t used) {
  return std::max<int64_t>(allocatable - used, 0);
}

// What the node's running containers hold, as NFD counts it from kubelet's PodResources List:
// regular init containers are not listed there (they have finished; what they held went back
// or to the app containers), so they are left out here too.
struct Held {
  CpuSet exclusive_cpus;
  std::map<int, std::map<std::string, uint64_t>> memory;    // NUMA id -> resource -> bytes
  std::map<std::string, std::vector<std::string>> devices;  // resource -> ids
};

Held HeldByRunningContainers(const state::State& records) {
  Held held;
  for (const auto& entry : records.pods) {
    for (const state::ContainerRecord& c : entry.second.containers) {
      if (c.init && !c.restartable) continue;
      if (c.exclusive) held.exclusive_cpus = held.exclusive_cpus.Union(c.cpus);
      for (const auto& [node, resources] : c.memory) {
        for (const auto& [resource, bytes] : resources) held.memory[node][resource] += bytes;
      }
      for (const auto& [resource, ids] : c.devices) {
        std::vector<std::string>& all = held.devices[resource];
        all.insert(all.end(), ids.begin(), ids.end());
      }
    }
  }
  return held;
}

ResourceInfo CpuResource(const admission::NodePolicy& policy, const topology::NumaNode& node,
                         const Held& held) {
  // Allocatable CPUs are those kubelet's GetAllocatableResources lists: the CPUs that can be
  // given exclusively, i.e. every CPU but the reserved ones under the static policy, none
  // under policy none. Available: minus the CPUs running containers hold exclusively.
  const int64_t capacity = node.cpus.Size();
  int64_t allocatable = 0;
  if (policy.cpu.has_value()) {
    allocatable = node.cpus.Difference(policy.cpu->reserved()).Size();
  }
  const int64_t used = node.cpus.Intersection(held.exclusive_cpus).Size();
  return {"cpu", capacity, allocatable, Minus(allocatable, used)};
}

// memory, then hugepages by ascending page size; only with the memory manager's Static policy
// (kubelet reports no per-NUMA memory otherwise) and only the kinds the node has.
std::vector<ResourceInfo> MemoryResources(const admission::NodePolicy& policy,
                                          const topology::NumaNode& node, const Held& held) {
  std::vector<ResourceInfo> out;
  if (!policy.memory_static) return out;
  auto tables = policy.empty_state.memory.machine_state.find(node.id);
  if (tables == policy.empty_state.memory.machine_state.end()) return out;
  auto used_on_node = held.memory.find(node.id);
  auto add = [&](const std::string& name, const memory::MemoryTable& table) {
    if (table.total == 0) return;
    uint64_t used = 0;
    if (used_on_node != held.memory.end()) {
      if (auto u = used_on_node->second.find(name); u != used_on_node->second.end()) {
        used = u->second;
      }
    }
    const int64_t allocatable = Signed(table.allocatable);
    out.push_back({name, Signed(table.total), allocatable, Minus(allocatable, Signed(used))});
  };
  auto add_named = [&](const std::string& name) {
    if (auto t = tables->second.memory_map.find(name); t != tables->second.memory_map.end()) {
      add(name, t->second);
    }
  };
  add_named("memory");
  for (const topology::HugePages& hp : node.hugepages) {
    add_named(memory::HugePageResourceName(hp.size_kib));
  }
  return out;
}

// Per device pool: a device counts on every NUMA node it reports (kubelet's allocatable, as
// NFD sums it); a held device is taken from the last of its nodes (NFD maps each device id to
// one node, the last one listed). Devices without topology are in no zone.
std::vector<ResourceInfo> DeviceResources(const admission::NodePolicy& policy,
                                          const topology::NumaNode& node, const Held& held) {
  std::vector<ResourceInfo> out;
  for (const auto& [resource, pool] : policy.devices.pools) {
    int64_t count = 0;
    for (const device::Device& d : pool.devices) {
      if (std::find(d.numa_nodes.begin(), d.numa_nodes.end(), node.id) != d.numa_nodes.end()) {
        ++count;
      }
    }
    if (count == 0) continue;
    int64_t used = 0;
    if (auto ids = held.devices.find(resource); ids != held.devices.end()) {
      for (const std::string& id : ids->second) {
        const device::Device* d = pool.Find(id);
        if (d != nullptr && !d->numa_nodes.empty() && d->numa_nodes.back() == node.id) ++used;
      }
    }
    out.push_back({resource, count, count, Minus(count, used)});
  }
  return out;
}

std::vector<CostInfo> Costs(const topology::Topology& machine, const topology::NumaNode& node) {
  std::vector<CostInfo> out;
  for (size_t i = 0; i < node.distances.size() && i < machine.numa_nodes.size(); ++i) {
    out.push_back({ZoneName(machine.numa_nodes[i].id), node.distances[i]});
  }
  return out;
}

std::string Fingerprint(const state::State& records) {
  PodFingerprint fingerprint;
  for (const auto& entry : records.pods) {
    // Pods imported from kubelet's checkpoints have no name until admitted again; the
    // scheduler cannot know them by uid either.
    if (entry.second.name.empty()) continue;
    fingerprint.Add(entry.second.namespace_name, entry.second.name);
  }
  return fingerprint.Sign();
}

}  // namespace

std::string DeprecatedTopologyPolicy(hints::Policy policy, admission::Scope scope) {
  const bool pod = scope == admission::Scope::kPod;
  switch (policy) {
    case hints::Policy::kSingleNumaNode:
      return pod ? "SingleNUMANodePodLevel" : "SingleNUMANodeContainerLevel";
    case hints::Policy::kRestricted:
      return pod ? "RestrictedPodLevel" : "RestrictedContainerLevel";
    case hints::Policy::kBestEffort:
      return pod ? "BestEffortPodLevel" : "BestEffortContainerLevel";
    case hints::Policy::kNone:
      break;
  }
  return "None";
}

NodeResourceTopology BuildNodeResourceTopology(const admission::NodePolicy& policy,
                                               const state::State& records,
                                               const std::string& node_name) {
  const topology::Topology& machine = *policy.topology;
  const Held held = HeldByRunningContainers(records);
  NodeResourceTopology nrt;
  nrt.name = node_name;
  nrt.topology_policies = {DeprecatedTopologyPolicy(policy.policy, policy.scope)};
  nrt.attributes = {
      {"topologyManagerPolicy", std::string(hints::PolicyName(policy.policy))},
      {"topologyManagerScope", std::string(admission::ScopeName(policy.scope))},
      {"topologyManagerMaxNUMANodes", std::to_string(policy.options.max_allowable_numa_nodes)},
      {std::string(kPodsFingerprintAttribute), Fingerprint(records)},
      {std::string(kPodsFingerprintMethodAttribute), std::string(kPodsFingerprintMethodAll)},
  };
  for (const topology::NumaNode& node : machine.numa_nodes) {
    Zone zone{.name = ZoneName(node.id), .type = std::string(kZoneTypeNode)};
    zone.costs = Costs(machine, node);
    zone.resources.push_back(CpuResource(policy, node, held));
    for (ResourceInfo& r : MemoryResources(policy, node, held)) {
      zone.resources.push_back(std::move(r));
    }
    for (ResourceInfo& r : DeviceResources(policy, node, held)) {
      zone.resources.push_back(std::move(r));
    }
    nrt.zones.push_back(std::move(zone));
  }
  return nrt;
}

}  // namespace topologyd::nrt
