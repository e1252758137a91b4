// The test host of the Placement tests: 2 sockets, 4 NUMA nodes of 16 CPUs (node n holds
// CPUs 8n..8n+7 and their siblings 32+8n..32+8n+7), CPUs 0 and 32 reserved, six CPUs of node 0
// and four of node 3 shared (VCPU ratio 4); node 0 with 1024 2M and 4 1G pages and 2 GiB of
// base pages plus one 1G page reserved, node 1 with 512 2M and 2 1G pages, node 2 with none,
// node 3 with 512 2M pages; GPUs 10de:20b0 local to node 1, node 3 and nodes {0,1}, and a NIC
// no pool selects.
#pragma once

#include "lib/placement/mapping.h"
#include "lib/topology/topology.h"

namespace topologyd::placement::testing {

inline constexpr uint64_t kGiB = 1024ull * 1024 * 1024;
inline constexpr uint64_t kMiBytes = 1024ull * 1024;

inline topology::Topology TestHost() {
  topology::Topology t;
  for (int n = 0; n < 4; ++n) {
    topology::NumaNode node;
    node.id = n;
    node.cpus = CpuSet::Range(8 * n, 8 * n + 7).Union(CpuSet::Range(32 + 8 * n, 32 + 8 * n + 7));
    node.memory_bytes = 64 * kGiB;
    t.numa_nodes.push_back(node);
  }
  t.numa_nodes[0].memory_bytes = 63826 * kMiBytes;
  t.numa_nodes[0].hugepages = {{2048, 1024}, {1048576, 4}};
  t.numa_nodes[1].hugepages = {{2048, 512}, {1048576, 2}};
  t.numa_nodes[2].hugepages = {{2048, 0}, {1048576, 0}};
  t.numa_nodes[3].hugepages = {{2048, 512}, {1048576, 0}};
  const auto gpu = [](std::string busid, std::vector<int> numa) {
    return topology::PciDevice{.busid = std::move(busid),
                               .vendor_id = 0x10de,
                               .device_id = 0x20b0,
                               .class_id = 0x0302,
                               .kind = topology::DeviceKind::kGpu,
                               .numa_nodes = std::move(numa),
                               .physfn_busid = std::nullopt};
  };
  t.pci_devices = {topology::PciDevice{.busid = "0000:18:00.0",
                                       .vendor_id = 0x8086,
                                       .device_id = 0x1593,
                                       .class_id = 0x0200,
                                       .kind = topology::DeviceKind::kNetwork,
                                       .numa_nodes = {0},
                                       .physfn_busid = std::nullopt},
                   gpu("0000:3b:00.0", {1}), gpu("0000:5e:00.0", {0, 1}), gpu("0000:af:00.0", {3})};
  return t;
}

inline NodeOffer TestHostOffer() {
  NodeOffer offer;
  offer.cpus_pinnable = true;
  offer.reserved_cpus = *CpuSet::Parse("0,32");
  offer.reserved_memory = {memory::ReservedMemory{
      .numa_node = 0, .limits = {{"memory", 2 * kGiB}, {"hugepages-1Gi", 1 * kGiB}}}};
  offer.device_selectors = {device::PciMatch{.vendor = 0x10de, .device = 0x20b0}};
  return offer;
}

inline PlacementOptions TestHostOptions() {
  PlacementOptions options;
  options.node_name = "e2e-host";
  options.shared_cpus = *CpuSet::Parse("2-4,34-36,28-29,60-61");
  options.vcpu_allocation_ratio = 4.0;
  return options;
}

}  // namespace topologyd::placement::testing
