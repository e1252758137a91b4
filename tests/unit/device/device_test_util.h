// Helpers shared by the device tests: small pools, pods and kubelet's explicit hint lists.
#pragma once

#include <string>
#include <vector>

#include "lib/device/device_pool.h"
#include "lib/hints/numa_index.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"
#include "lib/topology/topology.h"
#include "tests/support/pod_builder.h"

namespace topologyd::device::testing {

using ::topologyd::testing::BestEffort;
using ::topologyd::testing::Counts;
using ::topologyd::testing::Ctr;
using ::topologyd::testing::Pod;

// A device on the given NUMA positions (== OS ids in these tests); none = no topology.
inline Device Dev(std::string id, std::vector<int> numa = {}) {
  Device d;
  d.id = std::move(id);
  d.numa_nodes = numa;
  d.numa_mask = hints::NumaMask::Of(numa);
  return d;
}

// The NUMA index of `machine`'s nodes, as the node policy builds it.
inline hints::NumaIndex NumaIndexOf(const topology::Topology& machine) {
  std::vector<int> ids;
  for (const topology::NumaNode& node : machine.numa_nodes) ids.push_back(node.id);
  return hints::NumaIndex(std::move(ids));
}

inline DeviceInventory Inventory(int numa_count, std::vector<DevicePool> pools) {
  DeviceInventory inv;
  inv.numa_count = numa_count;
  for (DevicePool& p : pools) {
    std::sort(p.devices.begin(), p.devices.end(),
              [](const Device& a, const Device& b) { return a.id < b.id; });
    inv.pools.emplace(p.resource_name, std::move(p));
  }
  return inv;
}

inline DevicePool Pool(std::string resource, std::vector<Device> devices) {
  DevicePool p;
  p.resource_name = std::move(resource);
  p.devices = std::move(devices);
  return p;
}

inline hints::TopologyHint H(std::vector<int> nodes, bool preferred) {
  return hints::TopologyHint{.affinity = hints::NumaMask::Of(nodes), .preferred = preferred};
}

// The list kubelet would return for `h`, in kubelet's order (mask size, then lexicographic):
// the upward closure of an upward-closed answer, or the explicit list as is.
inline std::vector<hints::TopologyHint> Expand(const hints::ResourceHints& h) {
  if (!h.upward_closed) return h.hints;
  std::vector<uint64_t> masks;
  const uint64_t u = h.universe.bits();
  for (uint64_t m = u; m != 0; m = (m - 1) & u) masks.push_back(m);
  std::sort(masks.begin(), masks.end(), [](uint64_t a, uint64_t b) {
    const int ca = std::popcount(a), cb = std::popcount(b);
    if (ca != cb) return ca < cb;
    // lexicographic order of the ascending node lists
    std::vector<int> la = hints::NumaMask(a).Ids(), lb = hints::NumaMask(b).Ids();
    return la < lb;
  });
  std::vector<hints::TopologyHint> out;
  for (uint64_t m : masks) {
    bool contains = false;
    bool preferred = false;
    for (const hints::TopologyHint& e : h.hints) {
      const uint64_t eb = e.affinity->bits();
      if ((eb & m) == eb) contains = true;
      if (eb == m && e.preferred) preferred = true;
    }
    if (contains) out.push_back({hints::NumaMask(m), preferred});
  }
  return out;
}

}  // namespace topologyd::device::testing
