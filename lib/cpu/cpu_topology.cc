#include "lib/cpu/cpu_topology.h"

#include <cassert>
#include <set>
#include <utility>

namespace topologyd::cpu {

CpuTopology::CpuTopology(CpuCounters counters, std::map<int, CpuInfo> details,
                         hints::NumaIndex numa)
    : counters_(counters), details_(std::move(details)), numa_(std::move(numa)) {
  if (!details_.empty() && details_.rbegin()->first >= 0) {
    by_id_.resize(static_cast<size_t>(details_.rbegin()->first) + 1);
  }
  for (const auto& [cpu, info] : details_) {
    if (cpu >= 0) by_id_[static_cast<size_t>(cpu)] = info;
    cpus_.Add(cpu);
    numa_cpus_[info.numa_id].Add(cpu);
    socket_cpus_[info.socket_id].Add(cpu);
    core_cpus_[info.core_id].Add(cpu);
    uncore_cpus_[info.uncore_id].Add(cpu);
  }
  if (numa_.size() == 0) {
    std::vector<int> ids;
    for (const auto& [id, cpus] : numa_cpus_) ids.push_back(id);
    numa_ = hints::NumaIndex(std::move(ids));
  }
}

int CpuTopology::CpusPerCore() const {
  return counters_.num_cores == 0 ? 0 : counters_.num_cpus / counters_.num_cores;
}
int CpuTopology::CpusPerSocket() const {
  return counters_.num_sockets == 0 ? 0 : counters_.num_cpus / counters_.num_sockets;
}
int CpuTopology::CpusPerUncore() const {
  return counters_.num_uncore_caches == 0 ? 0 : counters_.num_cpus / counters_.num_uncore_caches;
}

const CpuInfo* CpuTopology::Find(int cpu) const {
  if (cpu >= 0 && static_cast<size_t>(cpu) < by_id_.size()) {
    return cpus_.Contains(cpu) ? &by_id_[static_cast<size_t>(cpu)] : nullptr;
  }
  // Negative ids (only a hand-built map has them) are not in the table.
  auto it = details_.find(cpu);
  return it == details_.end() ? nullptr : &it->second;
}

const CpuInfo& CpuTopology::At(int cpu) const {
  static const CpuInfo kAbsent;
  const CpuInfo* info = Find(cpu);
  assert(info != nullptr && "CpuTopology::At: CPU not in the map");
  return info != nullptr ? *info : kAbsent;
}

std::vector<int> CpuTopology::NumaIds() const {
  std::vector<int> ids;
  for (const auto& [numa, cpus] : numa_cpus_) ids.push_back(numa);
  return ids;
}

CpuSet CpuTopology::CpusInNumaNodes(const std::vector<int>& ids) const {
  CpuSet result;
  for (int id : ids) {
    auto it = numa_cpus_.find(id);
    if (it != numa_cpus_.end()) result.AddAll(it->second);
  }
  return result;
}

CpuSet CpuTopology::CpusInSockets(const std::vector<int>& ids) const {
  CpuSet result;
  for (int id : ids) {
    auto it = socket_cpus_.find(id);
    if (it != socket_cpus_.end()) result.AddAll(it->second);
  }
  return result;
}

std::vector<int> CpuTopology::SocketsInNumaNodes(const std::vector<int>& ids) const {
  std::set<int> sockets;
  for (int cpu : CpusInNumaNodes(ids)) sockets.insert(At(cpu).socket_id);
  return {sockets.begin(), sockets.end()};
}

CpuSet CpuTopology::CpusOfCoresContaining(const CpuSet& cpus) const {
  CpuSet result;
  for (int cpu : cpus) {
    const CpuInfo* info = Find(cpu);
    if (info != nullptr) result.AddAll(core_cpus_.at(info->core_id));
  }
  return result;
}

CpuTopology FromTopology(const topology::Topology& topology) {
  std::vector<int> numa_ids;
  for (const topology::NumaNode& node : topology.numa_nodes) numa_ids.push_back(node.id);
  std::map<int, CpuInfo> details;
  // Cores are counted as (package, core id) pairs: kubelet's test maps reuse a CoreID in two
  // packages and still count two cores (their NumCores says so).
  std::set<std::pair<int, int>> cores;
  std::set<int> numas;
  std::set<int> uncores;
  for (const topology::Cpu& cpu : topology.cpus) {
    if (cpu.numa_id < 0) continue;  // cAdvisor only lists CPUs that belong to a NUMA node
    CpuInfo info;
    info.core_id = cpu.core_id;
    info.socket_id = cpu.package_id;
    info.numa_id = cpu.numa_id;
    if (cpu.l3_id >= 0) {
      info.uncore_id = cpu.l3_id;
    } else {
      info.uncore_id = topology.kubelet_test_map ? 0 : cpu.package_id;
    }
    details[cpu.id] = info;
    cores.insert({cpu.package_id, cpu.core_id});
    numas.insert(info.numa_id);
    uncores.insert(info.uncore_id);
  }
  CpuCounters counters;
  counters.num_cpus = static_cast<int>(topology.cpus.size());
  counters.num_cores = static_cast<int>(cores.size());
  counters.num_sockets = static_cast<int>(topology.packages.size());
  counters.num_numa_nodes = static_cast<int>(numas.size());
  counters.num_uncore_caches = static_cast<int>(uncores.size());
  return CpuTopology(counters, std::move(details), hints::NumaIndex(std::move(numa_ids)));
}

}  // namespace topologyd::cpu
