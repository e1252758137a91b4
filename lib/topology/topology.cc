#include "lib/topology/topology.h"

#include <algorithm>

namespace topologyd::topology {
namespace {

// Every id-keyed vector of Topology is sorted by id, so lookups are binary searches.
template <typename T>
const T* FindById(const std::vector<T>& items, int id) {
  auto it = std::lower_bound(items.begin(), items.end(), id,
                             [](const T& item, int value) { return item.id < value; });
  if (it == items.end() || it->id != id) return nullptr;
  return &*it;
}

}  // namespace

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNetwork:
      return "network";
    case DeviceKind::kStorage:
      return "storage";
    case DeviceKind::kAccelerator:
      return "accelerator";
    case DeviceKind::kOther:
      return "other";
  }
  return "other";
}

const NumaNode* Topology::FindNuma(int id) const { return FindById(numa_nodes, id); }

const Cpu* Topology::FindCpu(int id) const { return FindById(cpus, id); }

const Package* Topology::FindPackage(int id) const { return FindById(packages, id); }

CpuSet Topology::AllCpus() const {
  CpuSet all;
  for (const Cpu& cpu : cpus) all.Add(cpu.id);
  return all;
}

std::optional<uint32_t> Topology::Distance(int from_numa, int to_numa) const {
  const NumaNode* from = FindNuma(from_numa);
  const NumaNode* to = FindNuma(to_numa);
  if (from == nullptr || to == nullptr || from->distances.size() != numa_nodes.size()) {
    return std::nullopt;
  }
  return from->distances[static_cast<size_t>(to - numa_nodes.data())];  // `to`'s column
}

}  // namespace topologyd::topology
