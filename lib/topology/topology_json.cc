#include "lib/topology/topology_json.h"

#include <vector>

#include "fmt/format.h"

namespace topologyd::topology {
namespace {

// Page sizes as people write them: 64K, 2M, 1G.
std::string PageSizeText(uint64_t size_kib) {
  if (size_kib >= 1024 * 1024 && size_kib % (1024 * 1024) == 0) {
    return fmt::format("{}G", size_kib / (1024 * 1024));
  }
  if (size_kib >= 1024 && size_kib % 1024 == 0) return fmt::format("{}M", size_kib / 1024);
  return fmt::format("{}K", size_kib);
}

std::string MemoryText(uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes >= uint64_t{1} << 30)
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kMiB);
}

std::string DeviceLine(const PciDevice& device) {
  return fmt::format("{} {} {}:{} class {}", device.busid, DeviceKindName(device.kind),
                     HexId(device.vendor_id), HexId(device.device_id), HexId(device.class_id));
}

}  // namespace

std::string HexId(uint16_t id) { return fmt::format("{:04x}", id); }

nlohmann::json TopologyToJson(const Topology& topology) {
  nlohmann::json numa_nodes = nlohmann::json::array();
  for (const NumaNode& node : topology.numa_nodes) {
    nlohmann::json hugepages = nlohmann::json::array();
    for (const HugePages& pages : node.hugepages) {
      hugepages.push_back({{"size_kib", pages.size_kib}, {"count", pages.count}});
    }
    nlohmann::json distances = nlohmann::json::array();
    for (uint32_t distance : node.distances) distances.push_back(distance);
    numa_nodes.push_back({{"id", node.id},
                          {"cpus", node.cpus.ToString()},
                          {"memory_bytes", node.memory_bytes},
                          {"hugepages", std::move(hugepages)},
                          {"distances", std::move(distances)}});
  }
  nlohmann::json l3_groups = nlohmann::json::array();
  for (const L3Group& group : topology.l3_groups) l3_groups.push_back(group.cpus.ToString());
  nlohmann::json devices = nlohmann::json::array();
  for (const PciDevice& device : topology.pci_devices) {
    nlohmann::json local = nlohmann::json::array();
    for (int id : device.numa_nodes) local.push_back(id);
    devices.push_back({{"busid", device.busid},
                       {"vendor_id", HexId(device.vendor_id)},
                       {"device_id", HexId(device.device_id)},
                       {"class_id", HexId(device.class_id)},
                       {"kind", std::string(DeviceKindName(device.kind))},
                       {"numa_nodes", std::move(local)}});
  }
  return nlohmann::json{
      {"packages", topology.packages.size()}, {"cores", topology.cores.size()},
      {"cpus", topology.cpus.size()},         {"numa_nodes", std::move(numa_nodes)},
      {"l3_groups", std::move(l3_groups)},    {"pci_devices", std::move(devices)}};
}

std::string TopologyToTable(const Topology& topology) {
  std::string out = fmt::format(
      "{} packages, {} dies, {} NUMA nodes, {} cores, {} CPUs, {} L3 groups, {} PCI devices{}\n",
      topology.packages.size(), topology.dies.size(), topology.numa_nodes.size(),
      topology.cores.size(), topology.cpus.size(), topology.l3_groups.size(),
      topology.pci_devices.size(), topology.kubelet_test_map ? " (kubelet test map)" : "");
  CpuSet in_nodes;
  for (const NumaNode& node : topology.numa_nodes) {
    in_nodes.AddAll(node.cpus);
    std::string title = fmt::format("NUMA node {}", node.id);
    if (node.cpus.IsEmpty()) title += " (CPU-less)";
    if (!node.subtype.empty()) title += fmt::format(" [{}]", node.subtype);
    out += fmt::format("\n{}\n", title);
    out += fmt::format("  cpus       {}\n", node.cpus.IsEmpty() ? "-" : node.cpus.ToString());
    out += fmt::format("  memory     {} ({} bytes)\n", MemoryText(node.memory_bytes),
                       node.memory_bytes);
    std::vector<std::string> pages;
    for (const HugePages& page : node.hugepages) {
      pages.push_back(fmt::format("{} x {}", PageSizeText(page.size_kib), page.count));
    }
    out += fmt::format("  hugepages  {}\n",
                       pages.empty() ? "-" : fmt::format("{}", fmt::join(pages, ", ")));
    std::vector<std::string> distances;
    for (size_t i = 0; i < node.distances.size() && i < topology.numa_nodes.size(); ++i) {
      distances.push_back(fmt::format("{}:{}", topology.numa_nodes[i].id, node.distances[i]));
    }
    out +=
        fmt::format("  distances  {}\n",
                    distances.empty() ? "unknown" : fmt::format("{}", fmt::join(distances, " ")));
    bool any_device = false;
    for (const PciDevice& device : topology.pci_devices) {
      for (int id : device.numa_nodes) {
        if (id != node.id) continue;
        out +=
            fmt::format("  {}  {}\n", any_device ? "         " : "devices  ", DeviceLine(device));
        any_device = true;
      }
    }
    if (!any_device) out += "  devices    -\n";
  }
  CpuSet orphans = topology.AllCpus().Difference(in_nodes);
  if (!orphans.IsEmpty()) out += fmt::format("\nCPUs in no NUMA node: {}\n", orphans.ToString());
  bool header = false;
  for (const PciDevice& device : topology.pci_devices) {
    if (!device.numa_nodes.empty()) continue;
    if (!header) out += "\nPCI devices without NUMA locality\n";
    header = true;
    out += fmt::format("  {}\n", DeviceLine(device));
  }
  return out;
}

}  // namespace topologyd::topology
