#include "lib/cpu/cpu_accumulator.h"

#include <algorithm>
#include <set>

namespace topologyd::cpu {

CpuAccumulator::CpuAccumulator(const CpuTopology& topology, const CpuSet& available, int num_cpus,
                               CpuSortingStrategy strategy)
    : topology_(topology),
      free_(available.Intersection(topology.Cpus())),
      need_(num_cpus),
      // The counters decide, not the map: a test topology that leaves NumNUMANodes at 0 is
      // NUMA-first whatever its map says.
      numa_first_(topology.num_sockets() >= topology.num_numa_nodes()),
      strategy_(strategy) {}

const std::map<int, CpuSet>& CpuAccumulator::GroupsOf(Level level) const {
  switch (level) {
    case Level::kNuma:
      return topology_.NumaNodes();
    case Level::kSocket:
      return topology_.Sockets();
    case Level::kCore:
      return topology_.Cores();
    case Level::kUncore:
      break;
  }
  return topology_.UncoreCaches();
}

int CpuAccumulator::IdOf(const CpuInfo& info, Level level) {
  switch (level) {
    case Level::kNuma:
      return info.numa_id;
    case Level::kSocket:
      return info.socket_id;
    case Level::kCore:
      return info.core_id;
    case Level::kUncore:
      break;
  }
  return info.uncore_id;
}

int CpuAccumulator::FreeCountIn(const std::map<int, CpuSet>& groups, int id) const {
  auto it = groups.find(id);
  return it == groups.end() ? 0 : it->second.IntersectionSize(free_);
}

void CpuAccumulator::SortAsc(std::vector<int>& ids, const std::map<int, CpuSet>& groups) const {
  std::vector<std::pair<int, int>> keyed;  // (free count, id)
  keyed.reserve(ids.size());
  for (int id : ids) keyed.emplace_back(FreeCountIn(groups, id), id);
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = keyed[i].second;
}

std::vector<int> CpuAccumulator::SortedInner(Level inner, Level outer, int outer_id) const {
  std::set<int> ids;
  for (int cpu : free_) {
    const CpuInfo& info = topology_.At(cpu);
    if (IdOf(info, outer) == outer_id) ids.insert(IdOf(info, inner));
  }
  std::vector<int> sorted(ids.begin(), ids.end());
  SortAsc(sorted, GroupsOf(inner));
  return sorted;
}

CpuSet CpuAccumulator::FreeCpusInNuma(int numa) const {
  auto it = topology_.NumaNodes().find(numa);
  return it == topology_.NumaNodes().end() ? CpuSet() : it->second.Intersection(free_);
}

std::vector<int> CpuAccumulator::SortedNumaNodes() const {
  if (numa_first_) {
    std::set<int> ids;
    for (int cpu : free_) ids.insert(topology_.At(cpu).numa_id);
    std::vector<int> sorted(ids.begin(), ids.end());
    SortAsc(sorted, topology_.NumaNodes());
    return sorted;
  }
  std::vector<int> result;
  for (int socket : SortedSockets()) {
    for (int numa : SortedInner(Level::kNuma, Level::kSocket, socket)) result.push_back(numa);
  }
  return result;
}

std::vector<int> CpuAccumulator::SortedSockets() const {
  if (!numa_first_) {
    std::set<int> ids;
    for (int cpu : free_) ids.insert(topology_.At(cpu).socket_id);
    std::vector<int> sorted(ids.begin(), ids.end());
    SortAsc(sorted, topology_.Sockets());
    return sorted;
  }
  std::vector<int> result;
  for (int numa : SortedNumaNodes()) {
    for (int socket : SortedInner(Level::kSocket, Level::kNuma, numa)) result.push_back(socket);
  }
  return result;
}

std::vector<int> CpuAccumulator::SortedCores() const {
  std::vector<int> result;
  if (numa_first_) {
    for (int socket : SortedSockets()) {
      for (int core : SortedInner(Level::kCore, Level::kSocket, socket)) result.push_back(core);
    }
  } else {
    for (int numa : SortedNumaNodes()) {
      for (int core : SortedInner(Level::kCore, Level::kNuma, numa)) result.push_back(core);
    }
  }
  return result;
}

std::vector<int> CpuAccumulator::SortedUncoreCaches() const {
  std::vector<int> result;
  for (int numa : SortedNumaNodes()) {
    for (int uncore : SortedInner(Level::kUncore, Level::kNuma, numa)) result.push_back(uncore);
  }
  return result;
}

std::vector<int> CpuAccumulator::SortedCpus() const {
  std::vector<int> result;
  if (strategy_ == CpuSortingStrategy::kPacked) {
    for (int core : SortedCores()) {
      for (int cpu : topology_.Cores().at(core).Intersection(free_)) result.push_back(cpu);
    }
  } else {
    for (int socket : SortedSockets()) {
      for (int cpu : topology_.Sockets().at(socket).Intersection(free_)) result.push_back(cpu);
    }
  }
  return result;
}

std::vector<int> CpuAccumulator::FreeNumaNodes() const {
  std::vector<int> result;
  for (int numa : SortedNumaNodes()) {
    if (FreeCountIn(topology_.NumaNodes(), numa) == topology_.NumaNodes().at(numa).Size()) {
      result.push_back(numa);
    }
  }
  return result;
}

std::vector<int> CpuAccumulator::FreeSockets() const {
  // A socket is free when its free CPUs number CPUsPerSocket, the counter-derived size.
  std::vector<int> result;
  for (int socket : SortedSockets()) {
    if (FreeCountIn(topology_.Sockets(), socket) == topology_.CpusPerSocket()) {
      result.push_back(socket);
    }
  }
  return result;
}

std::vector<int> CpuAccumulator::FreeCores() const {
  std::vector<int> result;
  for (int core : SortedCores()) {
    if (FreeCountIn(topology_.Cores(), core) == topology_.CpusPerCore()) result.push_back(core);
  }
  return result;
}

std::vector<int> CpuAccumulator::FreeUncoreCaches() const {
  std::vector<int> result;
  for (int uncore : SortedUncoreCaches()) {
    if (FreeCountIn(topology_.UncoreCaches(), uncore) ==
        topology_.UncoreCaches().at(uncore).Size()) {
      result.push_back(uncore);
    }
  }
  return result;
}

void CpuAccumulator::Take(const CpuSet& cpus) {
  result_.AddAll(cpus);
  free_ = free_.Difference(result_);
  need_ -= cpus.Size();
}

void CpuAccumulator::TakeFullNumaNodes() {
  for (int numa : FreeNumaNodes()) {
    const CpuSet& cpus = topology_.NumaNodes().at(numa);
    if (NeedsAtLeast(cpus.Size())) Take(cpus);
  }
}

void CpuAccumulator::TakeFullSockets() {
  for (int socket : FreeSockets()) {
    const CpuSet& cpus = topology_.Sockets().at(socket);
    if (NeedsAtLeast(cpus.Size())) Take(cpus);
  }
}

void CpuAccumulator::TakeFullFirstLevel() {
  if (numa_first_) {
    TakeFullNumaNodes();
  } else {
    TakeFullSockets();
  }
}

void CpuAccumulator::TakeFullSecondLevel() {
  if (numa_first_) {
    TakeFullSockets();
  } else {
    TakeFullNumaNodes();
  }
}

void CpuAccumulator::TakeUncoreCache() {
  const int per_uncore = topology_.CpusPerUncore();
  for (int uncore : SortedUncoreCaches()) {
    if (NeedsAtLeast(per_uncore)) {
      for (int free_uncore : FreeUncoreCaches()) {
        const CpuSet& cpus = topology_.UncoreCaches().at(free_uncore);
        if (NeedsAtLeast(cpus.Size())) Take(cpus);
      }
    }
    if (IsSatisfied()) return;
    TakePartialUncore(uncore);
    if (IsSatisfied()) return;
  }
}

void CpuAccumulator::TakePartialUncore(int uncore) {
  const int per_core = topology_.CpusPerCore();
  if (per_core == 0) return;
  const int cores_needed = (need_ + per_core - 1) / per_core;
  // The first cores by ascending CoreID (not by the packing order) with a free CPU in this
  // uncore cache, then every free CPU of those cores wherever its uncore cache is.
  std::set<int> core_ids;
  for (int cpu : free_) {
    const CpuInfo& info = topology_.At(cpu);
    if (info.uncore_id == uncore) core_ids.insert(info.core_id);
  }
  CpuSet cpus;
  int taken_cores = 0;
  for (int core : core_ids) {
    if (taken_cores++ == cores_needed) break;
    cpus.AddAll(topology_.Cores().at(core).Intersection(free_));
  }
  if (need_ % 2 != 0 && per_core > 1 && cpus.Size() > need_) cpus.Remove(cpus.Max());
  if (cpus.Size() == need_) Take(cpus);
}

void CpuAccumulator::TakeFullCores() {
  for (int core : FreeCores()) {
    const CpuSet& cpus = topology_.Cores().at(core);
    if (NeedsAtLeast(cpus.Size())) Take(cpus);
  }
}

void CpuAccumulator::TakeRemainingCpus() {
  for (int cpu : SortedCpus()) {
    Take(CpuSet{cpu});
    if (IsSatisfied()) return;
  }
}

}  // namespace topologyd::cpu
