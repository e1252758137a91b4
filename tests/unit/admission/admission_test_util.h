// Helpers for the admission tests: hand-built machines (via the topology builder, so the
// model's rules apply), configurations and pods.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/config/config.h"
#include "lib/config/node_policy_config.h"
#include "lib/pod/pod.h"
#include "lib/topology/topology.h"
#include "lib/topology/topology_builder.h"
#include "tests/support/pod_builder.h"

namespace topologyd::admission::testing {

using ::topologyd::testing::BestEffort;
using ::topologyd::testing::Ctr;
using ::topologyd::testing::Pod;

inline constexpr uint64_t kMi = uint64_t{1} << 20;
inline constexpr uint64_t kGi = uint64_t{1} << 30;

struct MachineSpec {
  int packages = 2;
  int numa_per_package = 1;
  int cores_per_numa = 4;
  int threads = 2;
  uint64_t memory_per_node = 16 * kGi;
  uint64_t hugepages_1g_per_node = 4;
  uint64_t hugepages_2m_per_node = 0;
  int gpus_per_node = 0;        // NVIDIA GPUs local to each CPU NUMA node
  int cpuless_per_package = 0;  // memory-only NUMA nodes per package (GPU memory, HBM)
  uint64_t cpuless_memory = 96 * kGi;
};

// CPU ids are dense per core: core c of the machine has CPUs c*threads .. c*threads+threads-1.
// CPU NUMA nodes have ids 0..P*N-1; CPU-less nodes follow. Distances: 10 local, 11 in the
// same package, 21 across packages. GPUs: bus ids 0000:XX:00.0.
inline topology::Topology Machine(const MachineSpec& spec) {
  topology::MachineDescription m;
  int cpu = 0;
  int core_index = 0;
  const int cpu_nodes = spec.packages * spec.numa_per_package;
  std::vector<int> node_package;
  std::vector<CpuSet> node_cpus(cpu_nodes);
  for (int p = 0; p < spec.packages; ++p) {
    topology::ObjectDescription package{.os_index = p, .cpus = {}};
    for (int n = 0; n < spec.numa_per_package; ++n) {
      const int node = p * spec.numa_per_package + n;
      for (int c = 0; c < spec.cores_per_numa; ++c) {
        topology::ObjectDescription core{.os_index = core_index++, .cpus = {}};
        for (int t = 0; t < spec.threads; ++t) {
          core.cpus.Add(cpu);
          node_cpus[node].Add(cpu);
          package.cpus.Add(cpu);
          m.pus.Add(cpu);
          ++cpu;
        }
        m.cores.push_back(core);
      }
      m.l3_caches.push_back({.os_index = node, .cpus = node_cpus[node]});
      node_package.push_back(p);
    }
    m.packages.push_back(package);
  }
  auto pages = [](uint64_t bytes, uint64_t hp2m, uint64_t hp1g) {
    std::vector<topology::PageType> out = {{4096, bytes / 4096}};
    if (hp2m > 0) out.push_back({2 * kMi, hp2m});
    if (hp1g > 0) out.push_back({kGi, hp1g});
    return out;
  };
  for (int node = 0; node < cpu_nodes; ++node) {
    m.numa_nodes.push_back({.os_index = node,
                            .cpus = node_cpus[node],
                            .memory_bytes = spec.memory_per_node,
                            .page_types = pages(spec.memory_per_node, spec.hugepages_2m_per_node,
                                                spec.hugepages_1g_per_node),
                            .subtype = ""});
  }
  int next_id = cpu_nodes;
  for (int p = 0; p < spec.packages; ++p) {
    for (int k = 0; k < spec.cpuless_per_package; ++k) {
      // hwloc repeats the package's CPUs on a memory-only node; the model makes it CPU-less.
      m.numa_nodes.push_back({.os_index = next_id++,
                              .cpus = node_cpus[p * spec.numa_per_package],
                              .memory_bytes = spec.cpuless_memory,
                              .page_types = pages(spec.cpuless_memory, 0, 0),
                              .subtype = "GPUMemory"});
      node_package.push_back(p);
    }
  }
  const int total = static_cast<int>(m.numa_nodes.size());
  for (int a = 0; a < total; ++a) m.distance_node_ids.push_back(m.numa_nodes[a].os_index);
  for (int a = 0; a < total; ++a) {
    for (int b = 0; b < total; ++b) {
      m.distance_values.push_back(a == b ? 10 : node_package[a] == node_package[b] ? 11 : 21);
    }
  }
  int bus = 0x10;
  for (int node = 0; node < cpu_nodes; ++node) {
    for (int g = 0; g < spec.gpus_per_node; ++g) {
      topology::PciDescription gpu;
      gpu.busid = fmt::format("0000:{:02x}:00.0", bus++);
      gpu.vendor_id = 0x10de;
      gpu.device_id = 0x2330;
      gpu.class_id = 0x0302;
      gpu.has_gpu_os_device = true;
      gpu.locality = node_cpus[node];
      m.pci_devices.push_back(gpu);
    }
  }
  absl::StatusOr<topology::Topology> t = topology::BuildTopology(m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : topology::Topology{};
}

// Static CPU policy with `reserved` CPUs, the given topology manager policy, Static memory
// manager with 1Gi reserved on node 0, and an NVIDIA GPU pool.
inline config::Config BaseConfig(std::string tm_policy = "best-effort",
                                 std::string reserved = "0-1") {
  config::Config c;
  c.cpu_manager_policy = "static";
  c.reserved_system_cpus = std::move(reserved);
  c.topology_manager_policy = std::move(tm_policy);
  c.topology_manager_scope = "container";
  c.memory_manager_policy = "Static";
  c.reserved_memory = {config::ReservedMemoryConfig{.numa_node = 0, .limits = {{"memory", "1Gi"}}}};
  c.devices = {config::DevicePoolConfig{.resource_name = "nvidia.com/gpu",
                                        .pci = config::DevicePciMatch{.vendor = 0x10de,
                                                                      .device = std::nullopt,
                                                                      .class_id = 0x0302,
                                                                      .virtual_functions = false},
                                        .devices = {}}};
  return c;
}

inline NodePolicy Node(const config::Config& config, const topology::Topology& topology) {
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, topology);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? *std::move(node) : NodePolicy{};
}

inline AdmissionResult MustAdmit(const NodePolicy& node, const AllocationState& state,
                                 const pod::Pod& pod) {
  absl::StatusOr<AdmissionResult> r = Admit(node, state, pod);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : AdmissionResult{};
}

inline const state::ContainerRecord* Find(const AdmissionResult& r, std::string_view name) {
  for (const state::ContainerRecord& c : r.containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace topologyd::admission::testing
