#include "lib/simulate/metrics.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "lib/memory/memory_state.h"

namespace topologyd::simulate {
namespace {

// Per resource: take the largest capacities until `need` is reached; the count taken, or the
// count of every node when even all of them fall short (the request does not fit at all).
int NodesFor(std::vector<uint64_t> capacity, uint64_t need) {
  if (need == 0) return 0;
  std::sort(capacity.begin(), capacity.end(), std::greater<>());
  uint64_t sum = 0;
  int taken = 0;
  for (uint64_t c : capacity) {
    if (sum >= need) break;
    sum += c;
    ++taken;
  }
  return taken;
}

const memory::MemoryTable* Table(const admission::NodePolicy& node, int numa_id,
                                 const std::string& resource) {
  auto n = node.empty_state.memory.machine_state.find(numa_id);
  if (n == node.empty_state.memory.machine_state.end()) return nullptr;
  auto t = n->second.memory_map.find(resource);
  return t == n->second.memory_map.end() ? nullptr : &t->second;
}

CpuSet ReservedCpus(const admission::NodePolicy& node) {
  return node.cpu ? node.cpu->reserved() : CpuSet();
}

}  // namespace

int FewestNodes(const admission::NodePolicy& node, int cpus,
                const std::map<std::string, uint64_t>& memory,
                const std::map<std::string, int>& devices) {
  const CpuSet reserved = ReservedCpus(node);
  int fewest = 0;
  if (cpus > 0) {
    std::vector<uint64_t> capacity;
    for (const topology::NumaNode& n : node.topology->numa_nodes) {
      capacity.push_back(static_cast<uint64_t>(n.cpus.Difference(reserved).Size()));
    }
    fewest = std::max(fewest, NodesFor(capacity, static_cast<uint64_t>(cpus)));
  }
  if (node.memory_static) {
    for (const auto& [resource, bytes] : memory) {
      std::vector<uint64_t> capacity;
      for (const topology::NumaNode& n : node.topology->numa_nodes) {
        const memory::MemoryTable* t = Table(node, n.id, resource);
        capacity.push_back(t ? t->allocatable : 0);
      }
      fewest = std::max(fewest, NodesFor(capacity, bytes));
    }
  }
  for (const auto& [resource, count] : devices) {
    const device::DevicePool* pool = node.devices.Find(resource);
    if (pool == nullptr || !pool->TopologyAware()) continue;
    std::map<int, uint64_t> per_node;
    for (const device::Device& d : pool->devices) {
      for (int id : d.numa_nodes) ++per_node[id];
    }
    std::vector<uint64_t> capacity;
    for (const auto& entry : per_node) capacity.push_back(entry.second);
    fewest = std::max(fewest, NodesFor(capacity, static_cast<uint64_t>(count)));
  }
  return fewest;
}

Placement PlacementOf(const admission::NodePolicy& node, const state::ContainerRecord& c) {
  std::set<int> nodes;
  int cpus = 0;
  if (c.exclusive) {
    cpus = c.cpus.Size();
    for (const topology::NumaNode& n : node.topology->numa_nodes) {
      if (n.cpus.Intersects(c.cpus)) nodes.insert(n.id);
    }
  }
  std::map<std::string, uint64_t> memory;
  for (const auto& [numa_id, resources] : c.memory) {
    for (const auto& [resource, bytes] : resources) {
      if (bytes == 0) continue;
      nodes.insert(numa_id);
      memory[resource] += bytes;
    }
  }
  std::map<std::string, int> devices;
  for (const auto& [resource, ids] : c.devices) {
    const device::DevicePool* pool = node.devices.Find(resource);
    if (pool == nullptr) continue;
    for (const std::string& id : ids) {
      const device::Device* d = pool->Find(id);
      if (d == nullptr || d->numa_nodes.empty()) continue;  // no locality: nothing to align
      nodes.insert(d->numa_nodes.begin(), d->numa_nodes.end());
      ++devices[resource];
    }
  }
  Placement p;
  p.pinned = !nodes.empty();
  p.nodes = static_cast<int>(nodes.size());
  p.fewest = FewestNodes(node, cpus, memory, devices);
  return p;
}

uint64_t MostCommon(const std::vector<uint64_t>& sizes) {
  std::map<uint64_t, int> count;
  for (uint64_t s : sizes) ++count[s];
  uint64_t best = 0;
  int best_count = 0;
  for (const auto& [size, n] : count) {  // ascending: the smallest wins a tie
    if (n > best_count) {
      best = size;
      best_count = n;
    }
  }
  return best;
}

uint64_t Stranded(const std::vector<uint64_t>& free_per_node, uint64_t unit) {
  if (unit == 0) return 0;
  uint64_t stranded = 0;
  for (uint64_t f : free_per_node) stranded += f % unit;
  return stranded;
}

void AddSizes(const pod::Pod& pod, WorkloadSizes& sizes) {
  if (pod::ComputeQos(pod) != pod::QosClass::kGuaranteed) return;
  for (const pod::OrderedContainer& oc : pod::StartOrder(pod)) {
    if (oc.role == pod::ContainerRole::kInit) continue;
    for (const auto& [resource, quantity] : oc.spec->requests) {
      if (resource == pod::kResourceCpu) {
        // Only whole CPUs are pinned; a fractional request stays in the shared pool.
        if (std::optional<int64_t> whole = quantity.AsInt64(); whole && *whole > 0) {
          sizes.cpus.push_back(static_cast<uint64_t>(*whole));
        }
      } else if (resource == pod::kResourceMemory || pod::IsHugePageResourceName(resource)) {
        if (quantity.Value() > 0) {
          sizes.memory[resource].push_back(static_cast<uint64_t>(quantity.Value()));
        }
      }
    }
  }
}

EndState MeasureEnd(const admission::NodePolicy& node, const ledger::Ledger& ledger,
                    const WorkloadSizes& sizes) {
  EndState end;
  const CpuSet reserved = ReservedCpus(node);
  const CpuSet available = ledger.shared_pool().Difference(reserved);
  std::map<std::string, std::vector<uint64_t>> memory_free;  // per resource, per node
  std::map<std::string, uint64_t> allocatable;               // per resource, whole machine
  for (const ledger::NumaUsage& u : ledger.PerNuma()) {
    NumaOccupancy o;
    o.numa_id = u.numa_id;
    o.cpus = u.cpus;
    o.exclusive_cpus = u.exclusive_cpus;
    o.reserved_cpus = u.reserved_cpus;
    o.memory_used = u.memory_used;
    if (node.memory_static) {
      auto n = node.empty_state.memory.machine_state.find(u.numa_id);
      if (n != node.empty_state.memory.machine_state.end()) {
        for (const auto& [resource, table] : n->second.memory_map) {
          o.memory_allocatable[resource] = table.allocatable;
          allocatable[resource] += table.allocatable;
          auto used = u.memory_used.find(resource);
          const uint64_t held = used == u.memory_used.end() ? 0 : used->second;
          memory_free[resource].push_back(table.allocatable > held ? table.allocatable - held : 0);
        }
      }
    }
    end.numa.push_back(std::move(o));
  }
  if (node.cpu) {
    std::vector<uint64_t> per_node;
    for (const topology::NumaNode& n : node.topology->numa_nodes) {
      per_node.push_back(static_cast<uint64_t>(n.cpus.IntersectionSize(available)));
    }
    FreeAmount cpu{"cpu", static_cast<uint64_t>(available.Size()), MostCommon(sizes.cpus), 0};
    cpu.stranded = Stranded(per_node, cpu.unit);
    end.free.push_back(cpu);
  }
  for (const auto& [resource, per_node] : memory_free) {
    // A hugepage size the machine has no pool of (none reserved at boot) is no resource here.
    if (allocatable[resource] == 0) continue;
    FreeAmount m{resource, 0, 0, 0};
    for (uint64_t f : per_node) m.free += f;
    if (auto s = sizes.memory.find(resource); s != sizes.memory.end()) {
      m.unit = MostCommon(s->second);
    }
    m.stranded = Stranded(per_node, m.unit);
    end.free.push_back(std::move(m));
  }
  return end;
}

}  // namespace topologyd::simulate
