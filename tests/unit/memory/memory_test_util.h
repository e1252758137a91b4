// Helpers for the memory tests: topologies, pods and state tables in kubelet's test units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_state.h"
#include "lib/pod/pod.h"
#include "lib/topology/topology.h"

namespace topologyd::memory::testing {

inline constexpr uint64_t kMb = 1024 * 1024;
inline constexpr uint64_t kGb = 1024 * kMb;

// NUMA nodes with ids 0..n-1, `memory` bytes each and `hp_1g` 1Gi hugepages each.
inline topology::Topology Topo(int n, uint64_t memory, uint64_t hp_1g, uint64_t hp_2m = 0) {
  topology::Topology t;
  for (int i = 0; i < n; ++i) {
    topology::NumaNode node;
    node.id = i;
    node.memory_bytes = memory;
    if (hp_2m > 0) node.hugepages.push_back({2048, hp_2m});
    node.hugepages.push_back({1048576, hp_1g});
    t.numa_nodes.push_back(node);
  }
  return t;
}

inline MemoryTable Table(uint64_t total, uint64_t system_reserved, uint64_t allocatable,
                         uint64_t reserved, uint64_t free) {
  return MemoryTable{total, system_reserved, allocatable, reserved, free};
}

inline pod::Container Ctr(std::string name, uint64_t memory, uint64_t hp_1g, bool guaranteed = true,
                          bool restart_always = false) {
  pod::Container c;
  c.name = std::move(name);
  c.restart_always = restart_always;
  c.limits["cpu"] = pod::Quantity::FromInt(1);
  c.requests["cpu"] = pod::Quantity::FromInt(1);
  c.limits["memory"] = pod::Quantity::FromInt(static_cast<int64_t>(memory * (guaranteed ? 1 : 2)));
  c.requests["memory"] = pod::Quantity::FromInt(static_cast<int64_t>(memory));
  if (hp_1g > 0) {
    c.limits["hugepages-1Gi"] = pod::Quantity::FromInt(static_cast<int64_t>(hp_1g));
    c.requests["hugepages-1Gi"] = pod::Quantity::FromInt(static_cast<int64_t>(hp_1g));
  }
  return c;
}

inline pod::Pod MakePod(std::string uid, std::vector<pod::Container> containers,
                        std::vector<pod::Container> init = {}) {
  pod::Pod p;
  p.uid = std::move(uid);
  p.name = p.uid;
  p.containers = std::move(containers);
  p.init_containers = std::move(init);
  return p;
}

inline hints::TopologyHint H(std::vector<int> nodes, bool preferred) {
  return hints::TopologyHint{.affinity = hints::NumaMask::Of(nodes), .preferred = preferred};
}

inline hints::ResourceHints List(std::vector<hints::TopologyHint> h) {
  hints::ResourceHints r;
  r.hints = std::move(h);
  return r;
}

}  // namespace topologyd::memory::testing
