// Hand-built machines for the picture tests: no hwloc involved.
#pragma once

#include <string>
#include <vector>

#include "lib/topology/topology.h"

namespace topologyd::picture::testing {

// `packages` x `numa` NUMA nodes per package x `cores` cores per node x `smt` CPUs per core,
// numbered consecutively; one L3 group per NUMA node, one die per package.
inline topology::Topology Machine(int packages, int numa, int cores, int smt) {
  topology::Topology m;
  int cpu = 0;
  for (int p = 0; p < packages; ++p) {
    const int package_first = cpu;
    for (int n = 0; n < numa; ++n) {
      const int node = p * numa + n;
      const int node_first = cpu;
      for (int c = 0; c < cores; ++c) {
        const int core_first = cpu;
        for (int t = 0; t < smt; ++t) {
          m.cpus.push_back({.id = cpu,
                            .core_id = core_first,
                            .package_id = p,
                            .die_id = 0,
                            .numa_id = node,
                            .l3_id = node_first});
          ++cpu;
        }
        m.cores.push_back(
            {.id = core_first, .package_id = p, .cpus = CpuSet::Range(core_first, cpu - 1)});
      }
      m.numa_nodes.push_back({.id = node,
                              .cpus = CpuSet::Range(node_first, cpu - 1),
                              .memory_bytes = uint64_t{16} << 30});
      m.l3_groups.push_back({.id = node_first, .cpus = CpuSet::Range(node_first, cpu - 1)});
    }
    m.packages.push_back({.id = p, .cpus = CpuSet::Range(package_first, cpu - 1)});
    m.dies.push_back({.id = 0, .package_id = p, .cpus = CpuSet::Range(package_first, cpu - 1)});
  }
  return m;
}

inline topology::PciDevice Device(const std::string& busid, std::vector<int> numa,
                                  topology::DeviceKind kind = topology::DeviceKind::kGpu) {
  return {.busid = busid,
          .vendor_id = 0x10de,
          .device_id = 0x20b0,
          .class_id = 0x0302,
          .kind = kind,
          .numa_nodes = std::move(numa),
          .physfn_busid = std::nullopt};
}

}  // namespace topologyd::picture::testing
