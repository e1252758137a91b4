// Admit() for one pod asking for 4 resources (cpu, memory, hugepages-2Mi and a device) on
// machines with many NUMA nodes: the 64-node SGI Altix and the 16-node Xeon Max (HBM flat,
// SNC4) of the recorded-machine corpus, and a GB200-like machine built here (2 Grace NUMA nodes
// with CPUs and 32 CPU-less GPU-memory NUMA nodes). Target: <= 1 ms per pod.
//
// Every machine gets 2048 hugepages of 2 MiB on each NUMA node with CPUs (the XML exports
// record none) and one explicit device pool `example.com/dev` with one device per NUMA node
// with CPUs (the GB200-like machine: its 4 GPUs, 2 per Grace node). The memory manager is
// Static with 1 GiB reserved on the first node; the CPU manager static with 2 reserved CPUs.
//
// Cases ("nomem": memoryManagerPolicy None, see below): "empty" admits onto an empty node; "busy"
// onto a node where earlier pods took half of the NUMA nodes' CPUs. Container scope unless named
// "pod".
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "benchmark/benchmark.h"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/config/node_policy_config.h"
#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_builder.h"

namespace topologyd::admission {
namespace {

constexpr uint64_t kGi = uint64_t{1} << 30;

// GB200-like: 2 packages (Grace, 72 cores, no SMT), one CPU NUMA node each (ids 0, 1), 16
// GPU-memory NUMA nodes per package (ids 2..33, 23 GiB each, hwloc subtype GPUMemory), 2 GPUs
// per package local to the Grace node.
topology::Topology Gb200Like() {
  topology::MachineDescription m;
  std::vector<CpuSet> node_cpus(2);
  int cpu = 0;
  for (int p = 0; p < 2; ++p) {
    topology::ObjectDescription package{.os_index = p, .cpus = {}};
    for (int c = 0; c < 72; ++c, ++cpu) {
      m.cores.push_back({.os_index = cpu, .cpus = CpuSet{cpu}});
      package.cpus.Add(cpu);
      node_cpus[p].Add(cpu);
      m.pus.Add(cpu);
    }
    m.l3_caches.push_back({.os_index = p, .cpus = node_cpus[p]});
    m.packages.push_back(package);
    m.numa_nodes.push_back({.os_index = p,
                            .cpus = node_cpus[p],
                            .memory_bytes = 480 * kGi,
                            .page_types = {{65536, 480 * kGi / 65536}},
                            .subtype = ""});
  }
  std::vector<int> package_of = {0, 1};
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 16; ++k) {
      m.numa_nodes.push_back({.os_index = 2 + p * 16 + k,
                              .cpus = node_cpus[p],  // hwloc repeats the Grace CPUs
                              .memory_bytes = 23 * kGi,
                              .page_types = {{65536, 23 * kGi / 65536}},
                              .subtype = "GPUMemory"});
      package_of.push_back(p);
    }
  }
  for (const auto& n : m.numa_nodes) m.distance_node_ids.push_back(n.os_index);
  for (size_t a = 0; a < m.numa_nodes.size(); ++a) {
    for (size_t b = 0; b < m.numa_nodes.size(); ++b) {
      m.distance_values.push_back(a == b ? 10 : package_of[a] == package_of[b] ? 80 : 120);
    }
  }
  for (int g = 0; g < 4; ++g) {
    topology::PciDescription gpu;
    gpu.busid = "0000:0" + std::to_string(g) + ":00.0";
    gpu.vendor_id = 0x10de;
    gpu.device_id = 0x2941;
    gpu.class_id = 0x0302;
    gpu.has_gpu_os_device = true;
    gpu.locality = node_cpus[g / 2];
    m.pci_devices.push_back(gpu);
  }
  return *topology::BuildTopology(m);
}

std::optional<topology::Topology> Shared(const std::string& file) {
  const std::filesystem::path path = std::filesystem::path(TOPOLOGYD_SHARED_TOPOLOGIES) / file;
  if (!std::filesystem::exists(path)) return std::nullopt;
  absl::StatusOr<topology::Topology> t =
      topology::LoadTopology(topology::TopologySource::Xml(path.string()));
  if (!t.ok()) return std::nullopt;
  return *t;
}

// The benchmark's node: hugepages and a device per CPU node (see the file comment).
std::optional<NodePolicy> MakeNode(topology::Topology t, const std::string& policy,
                                   const std::string& scope, bool memory_static) {
  config::Config c;
  c.cpu_manager_policy = "static";
  c.cpu_reserved_count = 2;
  c.topology_manager_policy = policy;
  c.topology_manager_scope = scope;
  c.memory_manager_policy = memory_static ? "Static" : "None";
  config::DevicePoolConfig pool{.resource_name = "example.com/dev", .pci = {}, .devices = {}};
  bool have_gpus = false;
  for (const auto& d : t.pci_devices) have_gpus |= d.vendor_id == 0x10de && d.class_id == 0x0302;
  for (topology::NumaNode& n : t.numa_nodes) {
    if (n.cpus.IsEmpty()) continue;
    n.hugepages = {{2048, 2048}};
    if (!have_gpus) {
      pool.devices.push_back({.id = "dev-" + std::to_string(n.id), .numa_nodes = {n.id}});
    }
  }
  if (have_gpus) {
    pool.pci = config::DevicePciMatch{
        .vendor = 0x10de, .device = std::nullopt, .class_id = 0x0302, .virtual_functions = false};
  }
  c.devices = {pool};
  c.reserved_memory = {{.numa_node = t.numa_nodes[0].id, .limits = {{"memory", "1Gi"}}}};
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(c, t);
  if (!node.ok()) return std::nullopt;
  return *std::move(node);
}

pod::Container Ctr(const std::string& name, const std::map<std::string, std::string>& r) {
  pod::Container c;
  c.name = name;
  for (const auto& [k, v] : r) {
    c.requests[k] = *pod::Quantity::Parse(v);
    c.limits[k] = c.requests[k];
  }
  return c;
}

pod::Pod FourResourcePod(const std::string& uid) {
  pod::Pod p;
  p.uid = uid;
  p.namespace_name = "bench";
  p.name = uid;
  p.containers = {
      Ctr("app",
          {{"cpu", "2"}, {"memory", "2Gi"}, {"hugepages-2Mi", "512Mi"}, {"example.com/dev", "1"}})};
  return p;
}

// Fills half of the CPU NUMA nodes with a 2-CPU pod each (without devices).
AllocationState Busy(const NodePolicy& node) {
  AllocationState s = node.empty_state;
  const int n = static_cast<int>(node.topology->numa_nodes.size());
  for (int i = 0; i < n / 2; ++i) {
    pod::Pod p;
    p.uid = "bg" + std::to_string(i);
    p.containers = {Ctr("c", {{"cpu", "2"}, {"memory", "1Gi"}})};
    absl::StatusOr<AdmissionResult> r = Admit(node, s, p);
    if (r.ok() && r->admitted) s = r->new_state;
  }
  return s;
}

// The timed loop: Admit(pod) onto `state`, which it leaves as it is.
void TimeAdmit(benchmark::State& bench, const NodePolicy& node, const AllocationState& state,
               const pod::Pod& pod) {
  bool admitted = false;
  for (auto _ : bench) {
    absl::StatusOr<AdmissionResult> r = Admit(node, state, pod);
    admitted = r.ok() && r->admitted;
    benchmark::DoNotOptimize(r);
  }
  bench.counters["admitted"] = admitted ? 1 : 0;
}

void BM_Admit(benchmark::State& bench, std::string machine, std::string policy, std::string scope,
              bool busy, bool memory_static = true) {
  std::optional<topology::Topology> t =
      machine == "gb200-like" ? std::optional(Gb200Like()) : Shared(machine);
  if (!t) {
    bench.SkipWithError("topology not available");
    return;
  }
  std::optional<NodePolicy> node = MakeNode(*t, policy, scope, memory_static);
  if (!node) {
    bench.SkipWithError("node policy refused");
    return;
  }
  const AllocationState state = busy ? Busy(*node) : node->empty_state;
  TimeAdmit(bench, *node, state, FourResourcePod("pod"));
  bench.counters["numa_nodes"] = static_cast<double>(node->num_nodes());
}

// The pod of the daemon load test (docs/performance.md, "Daemon load") on its machine and
// configuration: a Guaranteed 2-CPU pod with 256Mi, static CPU manager with CPU 0 reserved,
// best-effort topology manager, no memory manager, onto a node holding 7 such pods.
void BM_AdmitLoadPod(benchmark::State& bench) {
  std::optional<topology::Topology> t = Shared("amd-epyc7742-2s-nps4-4xa100-ib.xml");
  if (!t) {
    bench.SkipWithError("topology not available");
    return;
  }
  config::Config c;
  c.cpu_manager_policy = "static";
  c.reserved_system_cpus = "0";
  c.topology_manager_policy = "best-effort";
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(c, *t);
  if (!node.ok()) {
    bench.SkipWithError("node policy refused");
    return;
  }
  auto load_pod = [](const std::string& uid) {
    pod::Pod p;
    p.uid = uid;
    p.namespace_name = "load";
    p.name = uid;
    p.containers = {Ctr("c0", {{"cpu", "2"}, {"memory", "256Mi"}})};
    return p;
  };
  AllocationState state = node->empty_state;
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<AdmissionResult> r = Admit(*node, state, load_pod("bg" + std::to_string(i)));
    if (r.ok() && r->admitted) state = r->new_state;
  }
  TimeAdmit(bench, *node, state, load_pod("pod"));
}
BENCHMARK(BM_AdmitLoadPod)->Unit(benchmark::kMicrosecond);

constexpr const char* kAltix = "ia64-altix-64numa.xml";
constexpr const char* kXeonMax = "intel-xeonmax9462-2s-snc4-hbm-flat.xml";
constexpr const char* kGb200 = "gb200-like";

BENCHMARK_CAPTURE(BM_Admit, altix64_single_empty, kAltix, "single-numa-node", "container", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, altix64_single_busy, kAltix, "single-numa-node", "container", true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, altix64_besteffort_empty, kAltix, "best-effort", "container", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, altix64_restricted_pod, kAltix, "restricted", "pod", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, xeonmax16_single_empty, kXeonMax, "single-numa-node", "container",
                  false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, xeonmax16_single_busy, kXeonMax, "single-numa-node", "container", true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, xeonmax16_besteffort_empty, kXeonMax, "best-effort", "container", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200like34_single_empty, kGb200, "single-numa-node", "container",
                  false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200like34_besteffort_busy, kGb200, "best-effort", "container", true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200like34_restricted_pod, kGb200, "restricted", "pod", false)
    ->Unit(benchmark::kMicrosecond);

// The same without the memory manager (memoryManagerPolicy None): CPU and device hints, the
// merge and the allocations only, to show where the time goes.
BENCHMARK_CAPTURE(BM_Admit, altix64_single_empty_nomem, kAltix, "single-numa-node", "container",
                  false, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, altix64_restricted_pod_nomem, kAltix, "restricted", "pod", false, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, xeonmax16_single_empty_nomem, kXeonMax, "single-numa-node", "container",
                  false, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200like34_single_empty_nomem, kGb200, "single-numa-node", "container",
                  false, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200like34_besteffort_busy_nomem, kGb200, "best-effort", "container",
                  true, false)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topologyd::admission

BENCHMARK_MAIN();
