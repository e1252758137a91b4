#include "lib/topology/topology_builder.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/status_macros.h"

namespace topologyd::topology {
namespace {

// Packages keep their OS index; an XML without one (rare, old exports) falls back to the
// position, which is what hwloc's logical index would give.
absl::StatusOr<std::vector<Package>> BuildPackages(const MachineDescription& machine) {
  std::vector<Package> packages;
  if (machine.packages.empty()) {
    // Synthetic descriptions such as "numa:2 core:2 pu:2" have no Package level: one package
    // holding everything keeps "every CPU is in exactly one package" true.
    packages.push_back(Package{.id = 0, .cpus = machine.pus});
    return packages;
  }
  CpuSet seen;
  for (size_t i = 0; i < machine.packages.size(); ++i) {
    const ObjectDescription& object = machine.packages[i];
    if (object.cpus.Intersects(seen)) {
      return absl::InvalidArgumentError(
          fmt::format("packages overlap on CPUs {}", object.cpus.Intersection(seen).ToString()));
    }
    seen.AddAll(object.cpus);
    int id =
        object.os_index == ObjectDescription::kUnknownIndex ? static_cast<int>(i) : object.os_index;
    packages.push_back(Package{.id = id, .cpus = object.cpus});
  }
  CpuSet orphans = machine.pus.Difference(seen);
  if (!orphans.IsEmpty()) {
    return absl::InvalidArgumentError(
        fmt::format("CPUs {} belong to no package", orphans.ToString()));
  }
  std::sort(packages.begin(), packages.end(),
            [](const Package& a, const Package& b) { return a.id < b.id; });
  for (size_t i = 1; i < packages.size(); ++i) {
    if (packages[i].id == packages[i - 1].id) {
      return absl::InvalidArgumentError(fmt::format("duplicate package id {}", packages[i].id));
    }
  }
  return packages;
}

int PackageOf(const std::vector<Package>& packages, int cpu) {
  for (const Package& package : packages) {
    if (package.cpus.Contains(cpu)) return package.id;
  }
  return 0;  // unreachable after BuildPackages() validated coverage
}

// Each CPU goes to the NUMA node with the smallest hwloc cpuset containing it; ties go to the
// lowest OS index. hwloc hangs memory-only nodes (HBM, MCDRAM, GPU memory) beside the CPU
// node with an equal or larger cpuset, so they lose every CPU and come out CPU-less.
absl::StatusOr<std::vector<NumaNode>> BuildNumaNodes(const MachineDescription& machine,
                                                     std::map<int, int>* numa_of_cpu) {
  std::vector<const NumaDescription*> order;
  for (const NumaDescription& node : machine.numa_nodes) order.push_back(&node);
  std::sort(order.begin(), order.end(), [](const NumaDescription* a, const NumaDescription* b) {
    return a->os_index < b->os_index;
  });
  std::vector<NumaNode> nodes;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i]->os_index == order[i - 1]->os_index) {
      return absl::InvalidArgumentError(
          fmt::format("duplicate NUMA node id {}", order[i]->os_index));
    }
    NumaNode node;
    node.id = order[i]->os_index;
    node.memory_bytes = order[i]->memory_bytes;
    node.subtype = order[i]->subtype;
    // The smallest page size hwloc lists is the base page (4 KiB, or 64 KiB on POWER and some
    // ARM kernels); every other size is a huge page size, listed even when its count is 0.
    std::vector<PageType> pages;
    for (const PageType& page : order[i]->page_types) {
      if (page.size_bytes != 0) pages.push_back(page);
    }
    std::sort(pages.begin(), pages.end(),
              [](const PageType& a, const PageType& b) { return a.size_bytes < b.size_bytes; });
    for (size_t p = 1; p < pages.size(); ++p) {
      if (pages[p].size_bytes == pages[0].size_bytes) continue;
      node.hugepages.push_back(
          HugePages{.size_kib = pages[p].size_bytes / 1024, .count = pages[p].count});
    }
    nodes.push_back(std::move(node));
  }
  for (int cpu : machine.pus) {
    const NumaDescription* best = nullptr;
    for (const NumaDescription* candidate : order) {
      if (!candidate->cpus.Contains(cpu)) continue;
      if (best == nullptr || candidate->cpus.Size() < best->cpus.Size()) best = candidate;
    }
    if (best == nullptr) continue;  // a CPU on a memory-less die belongs to no node
    (*numa_of_cpu)[cpu] = best->os_index;
    for (NumaNode& node : nodes) {
      if (node.id == best->os_index) node.cpus.Add(cpu);
    }
  }
  return nodes;
}

absl::Status FillDistances(const MachineDescription& machine, std::vector<NumaNode>* nodes) {
  const size_t n = machine.distance_node_ids.size();
  if (n == 0) return absl::OkStatus();
  if (machine.distance_values.size() != n * n) {
    return absl::InvalidArgumentError(fmt::format("distance matrix has {} values for {} nodes",
                                                  machine.distance_values.size(), n));
  }
  std::map<int, size_t> index_of;
  for (size_t i = 0; i < n; ++i) index_of[machine.distance_node_ids[i]] = i;
  // A matrix that misses one of our nodes cannot give full rows; the contract is then
  // "unknown" for everyone rather than rows of different lengths.
  for (const NumaNode& node : *nodes) {
    if (!index_of.contains(node.id)) return absl::OkStatus();
  }
  for (NumaNode& from : *nodes) {
    size_t row = index_of[from.id];
    for (const NumaNode& to : *nodes) {
      from.distances.push_back(
          static_cast<uint32_t>(machine.distance_values[row * n + index_of[to.id]]));
    }
  }
  return absl::OkStatus();
}

std::vector<Core> BuildCores(const MachineDescription& machine,
                             const std::vector<Package>& packages,
                             std::map<int, int>* core_of_cpu) {
  std::vector<Core> cores;
  CpuSet covered;
  for (const ObjectDescription& object : machine.cores) {
    CpuSet cpus = object.cpus.Intersection(machine.pus);
    if (cpus.IsEmpty()) continue;
    covered.AddAll(cpus);
    // kubelet's Discover() names a core by its lowest CPU id (unique machine-wide); kubelet's
    // test maps instead number cores freely, which their XMLs record as the Core os_index.
    int id = cpus.Min();
    if (machine.kubelet_test_map && object.os_index != ObjectDescription::kUnknownIndex) {
      id = object.os_index;
    }
    cores.push_back(Core{.id = id, .package_id = PackageOf(packages, cpus.Min()), .cpus = cpus});
  }
  // PUs outside every Core (synthetic "pack:2 pu:4", some exports) are each their own core,
  // as the Linux kernel reports a core per CPU when it knows no siblings.
  for (int cpu : machine.pus.Difference(covered)) {
    cores.push_back(Core{.id = cpu, .package_id = PackageOf(packages, cpu), .cpus = {cpu}});
  }
  std::sort(cores.begin(), cores.end(), [](const Core& a, const Core& b) {
    return std::pair(a.id, a.package_id) < std::pair(b.id, b.package_id);
  });
  for (const Core& core : cores) {
    for (int cpu : core.cpus) {
      if (!core_of_cpu->contains(cpu)) (*core_of_cpu)[cpu] = core.id;
    }
  }
  return cores;
}

std::vector<L3Group> BuildL3Groups(const MachineDescription& machine,
                                   std::map<int, int>* l3_of_cpu) {
  std::vector<ObjectDescription> caches;
  for (const ObjectDescription& object : machine.l3_caches) {
    CpuSet cpus = object.cpus.Intersection(machine.pus);
    if (!cpus.IsEmpty()) caches.push_back(ObjectDescription{object.os_index, cpus});
  }
  // The L3Cache os_index is Linux's cache id (what cAdvisor gives kubelet) when hwloc read
  // one; older kernels and exports have none. Mixing the two numberings could collide, so
  // the lowest CPU id is used for every L3 unless all of them carry distinct os indexes.
  std::set<int> os_ids;
  bool use_os_index = true;
  for (const ObjectDescription& cache : caches) {
    if (cache.os_index == ObjectDescription::kUnknownIndex ||
        !os_ids.insert(cache.os_index).second) {
      use_os_index = false;
    }
  }
  std::vector<L3Group> groups;
  for (const ObjectDescription& cache : caches) {
    groups.push_back(
        L3Group{.id = use_os_index ? cache.os_index : cache.cpus.Min(), .cpus = cache.cpus});
  }
  std::sort(groups.begin(), groups.end(),
            [](const L3Group& a, const L3Group& b) { return a.id < b.id; });
  for (const L3Group& group : groups) {
    for (int cpu : group.cpus) {
      if (!l3_of_cpu->contains(cpu)) (*l3_of_cpu)[cpu] = group.id;
    }
  }
  return groups;
}

std::vector<Die> BuildDies(const MachineDescription& machine, const std::vector<Package>& packages,
                           std::map<int, int>* die_of_cpu) {
  std::vector<Die> dies;
  std::map<int, int> dies_seen_in_package;
  for (const ObjectDescription& object : machine.dies) {
    CpuSet cpus = object.cpus.Intersection(machine.pus);
    if (cpus.IsEmpty()) continue;
    int package_id = PackageOf(packages, cpus.Min());
    int position = dies_seen_in_package[package_id]++;
    int id = object.os_index == ObjectDescription::kUnknownIndex ? position : object.os_index;
    dies.push_back(Die{.id = id, .package_id = package_id, .cpus = cpus});
  }
  std::sort(dies.begin(), dies.end(), [](const Die& a, const Die& b) {
    return std::pair(a.package_id, a.id) < std::pair(b.package_id, b.id);
  });
  for (const Die& die : dies) {
    for (int cpu : die.cpus) {
      if (!die_of_cpu->contains(cpu)) (*die_of_cpu)[cpu] = die.id;
    }
  }
  return dies;
}

std::vector<PciDevice> BuildPciDevices(const MachineDescription& machine,
                                       const std::vector<NumaNode>& nodes) {
  int nodes_with_cpus = 0;
  for (const NumaNode& node : nodes) nodes_with_cpus += node.cpus.IsEmpty() ? 0 : 1;
  std::vector<PciDevice> devices;
  for (const PciDescription& description : machine.pci_devices) {
    PciDevice device;
    device.busid = description.busid;
    device.vendor_id = description.vendor_id;
    device.device_id = description.device_id;
    device.class_id = description.class_id;
    device.kind = ClassifyPciDevice(description.class_id, description.has_gpu_os_device);
    device.physfn_busid = description.physfn_busid;
    // A device hwloc could only hang off the Machine has no locality on a multi-node machine
    // (firmware gave none); claiming every node would invent a preference. On a machine with
    // a single CPU node, that node is trivially local.
    bool unknown = description.attached_to_root && nodes_with_cpus > 1;
    if (!unknown) {
      // Only nodes with CPUs: a device's locality is where its interrupts and DMA buffers
      // should live, which kubelet's device hints express as CPU-owning nodes.
      for (const NumaNode& node : nodes) {
        if (node.cpus.Intersects(description.locality)) device.numa_nodes.push_back(node.id);
      }
    }
    devices.push_back(std::move(device));
  }
  std::sort(devices.begin(), devices.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.busid < b.busid; });
  return devices;
}

}  // namespace

DeviceKind ClassifyPciDevice(uint16_t class_id, bool has_gpu_os_device) {
  const int base_class = class_id >> 8;
  if (base_class == 0x03) return DeviceKind::kGpu;
  if (base_class == 0x12) return has_gpu_os_device ? DeviceKind::kGpu : DeviceKind::kAccelerator;
  if (class_id == 0x0b40) return DeviceKind::kAccelerator;
  if (base_class == 0x02 || class_id == 0x0c06) return DeviceKind::kNetwork;
  if (base_class == 0x01) return DeviceKind::kStorage;
  return DeviceKind::kOther;
}

absl::StatusOr<Topology> BuildTopology(const MachineDescription& machine) {
  if (machine.pus.IsEmpty()) return absl::InvalidArgumentError("the machine has no PUs");
  Topology topology;
  topology.kubelet_test_map = machine.kubelet_test_map;

  TOPOLOGYD_ASSIGN_OR_RETURN(topology.packages, BuildPackages(machine));

  std::map<int, int> numa_of_cpu;
  TOPOLOGYD_ASSIGN_OR_RETURN(topology.numa_nodes, BuildNumaNodes(machine, &numa_of_cpu));
  TOPOLOGYD_RETURN_IF_ERROR(FillDistances(machine, &topology.numa_nodes));

  std::map<int, int> core_of_cpu;
  topology.cores = BuildCores(machine, topology.packages, &core_of_cpu);
  std::map<int, int> die_of_cpu;
  topology.dies = BuildDies(machine, topology.packages, &die_of_cpu);
  std::map<int, int> l3_of_cpu;
  topology.l3_groups = BuildL3Groups(machine, &l3_of_cpu);
  // kubelet's test maps leave UncoreCacheID at its zero value when they model no L3.
  const int missing_l3 = machine.kubelet_test_map && topology.l3_groups.empty() ? 0 : -1;

  for (int id : machine.pus) {
    auto lookup = [id](const std::map<int, int>& map, int missing) {
      auto it = map.find(id);
      return it == map.end() ? missing : it->second;
    };
    topology.cpus.push_back(Cpu{.id = id,
                                .core_id = lookup(core_of_cpu, id),  // every CPU has a core
                                .package_id = PackageOf(topology.packages, id),
                                .die_id = lookup(die_of_cpu, -1),
                                .numa_id = lookup(numa_of_cpu, -1),
                                .l3_id = lookup(l3_of_cpu, missing_l3)});
  }
  topology.pci_devices = BuildPciDevices(machine, topology.numa_nodes);
  return topology;
}

}  // namespace topologyd::topology
