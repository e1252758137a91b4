#include "lib/topology/topology_details_json.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/topology/topology_json.h"

namespace topologyd::topology {
namespace {

using nlohmann::json;

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("topology document: {}: {}", field, what));
}

std::string Path(const std::string& field, const char* key) {
  return field.empty() ? std::string(key) : field + "." + key;
}

// The value of `key` in `object` as T, or an error naming `field`.
template <typename T>
absl::StatusOr<T> Field(const json& object, const char* key, const std::string& field) {
  if (!object.is_object() || !object.contains(key)) return Invalid(Path(field, key), "missing");
  try {
    return object.at(key).get<T>();
  } catch (const json::exception& e) {
    return Invalid(Path(field, key), e.what());
  }
}

absl::StatusOr<uint16_t> HexField(const json& object, const char* key, const std::string& field) {
  absl::StatusOr<std::string> text = Field<std::string>(object, key, field);
  if (!text.ok()) return text.status();
  size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(*text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text->empty() || used != text->size() || value > 0xffff) {
    return Invalid(Path(field, key), "not 4 hex digits: \"" + *text + "\"");
  }
  return static_cast<uint16_t>(value);
}

absl::StatusOr<CpuSet> CpuListField(const json& object, const char* key, const std::string& field) {
  absl::StatusOr<std::string> text = Field<std::string>(object, key, field);
  if (!text.ok()) return text.status();
  absl::StatusOr<CpuSet> cpus = CpuSet::Parse(*text);
  if (!cpus.ok()) return Invalid(Path(field, key), std::string(cpus.status().message()));
  return cpus;
}

absl::StatusOr<NumaNode> ReadNumaNode(const json& entry, const std::string& field) {
  NumaNode node;
  absl::StatusOr<int> id = Field<int>(entry, "id", field);
  absl::StatusOr<CpuSet> cpus = CpuListField(entry, "cpus", field);
  absl::StatusOr<uint64_t> memory = Field<uint64_t>(entry, "memory_bytes", field);
  absl::StatusOr<std::vector<uint32_t>> distances =
      Field<std::vector<uint32_t>>(entry, "distances", field);
  absl::StatusOr<json> pages = Field<json>(entry, "hugepages", field);
  for (const absl::Status& s :
       {id.status(), cpus.status(), memory.status(), distances.status(), pages.status()}) {
    if (!s.ok()) return s;
  }
  node.id = *id;
  node.cpus = *cpus;
  node.memory_bytes = *memory;
  node.distances = *distances;
  for (size_t i = 0; i < pages->size(); ++i) {
    const std::string at = fmt::format("{}.hugepages[{}]", field, i);
    absl::StatusOr<uint64_t> size = Field<uint64_t>((*pages)[i], "size_kib", at);
    absl::StatusOr<uint64_t> count = Field<uint64_t>((*pages)[i], "count", at);
    if (!size.ok()) return size.status();
    if (!count.ok()) return count.status();
    node.hugepages.push_back({*size, *count});
  }
  return node;
}

absl::StatusOr<PciDevice> ReadDevice(const json& entry, const std::string& field) {
  PciDevice device;
  absl::StatusOr<std::string> busid = Field<std::string>(entry, "busid", field);
  absl::StatusOr<uint16_t> vendor = HexField(entry, "vendor_id", field);
  absl::StatusOr<uint16_t> id = HexField(entry, "device_id", field);
  absl::StatusOr<uint16_t> klass = HexField(entry, "class_id", field);
  absl::StatusOr<std::string> kind = Field<std::string>(entry, "kind", field);
  absl::StatusOr<std::vector<int>> nodes = Field<std::vector<int>>(entry, "numa_nodes", field);
  for (const absl::Status& s : {busid.status(), vendor.status(), id.status(), klass.status(),
                                kind.status(), nodes.status()}) {
    if (!s.ok()) return s;
  }
  device.busid = *busid;
  device.vendor_id = *vendor;
  device.device_id = *id;
  device.class_id = *klass;
  device.numa_nodes = *nodes;
  bool known = false;
  for (DeviceKind k : {DeviceKind::kGpu, DeviceKind::kNetwork, DeviceKind::kStorage,
                       DeviceKind::kAccelerator, DeviceKind::kOther}) {
    if (DeviceKindName(k) == *kind) {
      device.kind = k;
      known = true;
    }
  }
  if (!known) return Invalid(field + ".kind", "unknown kind \"" + *kind + "\"");
  return device;
}

// Packages, dies, cores and L3 groups: the groupings of the CPUs by their ids.
void GroupCpus(Topology& t) {
  std::map<int, CpuSet> packages;
  std::map<std::pair<int, int>, CpuSet> dies;   // (package, die)
  std::map<std::pair<int, int>, CpuSet> cores;  // (core, package)
  std::map<int, CpuSet> l3;
  for (const Cpu& cpu : t.cpus) {
    packages[cpu.package_id].Add(cpu.id);
    if (cpu.die_id >= 0) dies[{cpu.package_id, cpu.die_id}].Add(cpu.id);
    cores[{cpu.core_id, cpu.package_id}].Add(cpu.id);
    if (cpu.l3_id >= 0) l3[cpu.l3_id].Add(cpu.id);
  }
  for (auto& [id, cpus] : packages) t.packages.push_back({id, std::move(cpus)});
  for (auto& [key, cpus] : dies) t.dies.push_back({key.second, key.first, std::move(cpus)});
  for (auto& [key, cpus] : cores) t.cores.push_back({key.first, key.second, std::move(cpus)});
  for (auto& [id, cpus] : l3) t.l3_groups.push_back({id, std::move(cpus)});
}

}  // namespace

json TopologyDetailsToJson(const Topology& topology) {
  json document = TopologyToJson(topology);
  json cpus = json::array();
  for (const Cpu& cpu : topology.cpus) {
    cpus.push_back({{"id", cpu.id},
                    {"core", cpu.core_id},
                    {"package", cpu.package_id},
                    {"die", cpu.die_id},
                    {"numa", cpu.numa_id},
                    {"l3", cpu.l3_id}});
  }
  document["cpu_details"] = std::move(cpus);
  document["kubelet_test_map"] = topology.kubelet_test_map;
  return document;
}

absl::StatusOr<Topology> TopologyFromDetailsJson(const json& document) {
  Topology t;
  absl::StatusOr<json> details = Field<json>(document, "cpu_details", "");
  if (!details.ok()) return details.status();
  for (size_t i = 0; i < details->size(); ++i) {
    const std::string at = fmt::format("cpu_details[{}]", i);
    Cpu cpu;
    for (auto [key, slot] : {std::pair{"id", &cpu.id}, std::pair{"core", &cpu.core_id},
                             std::pair{"package", &cpu.package_id}, std::pair{"die", &cpu.die_id},
                             std::pair{"numa", &cpu.numa_id}, std::pair{"l3", &cpu.l3_id}}) {
      absl::StatusOr<int> value = Field<int>((*details)[i], key, at);
      if (!value.ok()) return value.status();
      *slot = *value;
    }
    if (cpu.id < 0 || (!t.cpus.empty() && cpu.id <= t.cpus.back().id)) {
      return Invalid(at + ".id", "CPU ids must ascend from 0 or more");
    }
    t.cpus.push_back(cpu);
  }
  absl::StatusOr<json> nodes = Field<json>(document, "numa_nodes", "");
  if (!nodes.ok()) return nodes.status();
  CpuSet in_nodes;
  for (size_t i = 0; i < nodes->size(); ++i) {
    absl::StatusOr<NumaNode> node = ReadNumaNode((*nodes)[i], fmt::format("numa_nodes[{}]", i));
    if (!node.ok()) return node.status();
    in_nodes.AddAll(node->cpus);
    t.numa_nodes.push_back(*std::move(node));
  }
  for (const Cpu& cpu : t.cpus) {
    const NumaNode* node = t.FindNuma(cpu.numa_id);
    if (cpu.numa_id >= 0 ? (node == nullptr || !node->cpus.Contains(cpu.id))
                         : in_nodes.Contains(cpu.id)) {
      return Invalid(fmt::format("cpu_details (CPU {})", cpu.id),
                     "its NUMA node disagrees with numa_nodes[].cpus");
    }
  }
  absl::StatusOr<json> devices = Field<json>(document, "pci_devices", "");
  if (!devices.ok()) return devices.status();
  for (size_t i = 0; i < devices->size(); ++i) {
    absl::StatusOr<PciDevice> device = ReadDevice((*devices)[i], fmt::format("pci_devices[{}]", i));
    if (!device.ok()) return device.status();
    t.pci_devices.push_back(*std::move(device));
  }
  if (document.contains("kubelet_test_map")) {
    absl::StatusOr<bool> test_map = Field<bool>(document, "kubelet_test_map", "");
    if (!test_map.ok()) return test_map.status();
    t.kubelet_test_map = *test_map;
  }
  GroupCpus(t);
  for (auto [key, count] : {std::pair{"cpus", t.cpus.size()}, std::pair{"cores", t.cores.size()},
                            std::pair{"packages", t.packages.size()}}) {
    absl::StatusOr<size_t> given = Field<size_t>(document, key, "");
    if (!given.ok()) return given.status();
    if (*given != count) {
      return Invalid(key, fmt::format("{} given, {} in cpu_details", *given, count));
    }
  }
  return t;
}

}  // namespace topologyd::topology
