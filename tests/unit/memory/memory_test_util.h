// Helpers for the memory tests: topologies, pods and state tables in kubelet's test units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_state.h"
#include "lib/pod/pod.h"
#include "lib/topology/topology.h"
#include "tests/support/pod_builder.h"

namespace topologyd::memory::testing {

using ::topologyd::testing::BestEffort;
using ::topologyd::testing::Ctr;
using ::topologyd::testing::Pod;

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

// A container of 1 CPU, `memory` bytes and `hp_1g` bytes of 1Gi pages; Burstable (its memory
// limit twice the request) unless `guaranteed`.
inline pod::Container Ctr(std::string name, uint64_t memory, uint64_t hp_1g, bool guaranteed = true,
                          bool restart_always = false) {
  ::topologyd::testing::Counts amounts = {{"cpu", 1}, {"memory", static_cast<int64_t>(memory)}};
  if (hp_1g > 0) amounts.emplace_back("hugepages-1Gi", static_cast<int64_t>(hp_1g));
  pod::Container c = ::topologyd::testing::Ctr(std::move(name), amounts, restart_always);
  if (!guaranteed) c.limits["memory"] = pod::Quantity::FromInt(static_cast<int64_t>(memory * 2));
  return c;
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
