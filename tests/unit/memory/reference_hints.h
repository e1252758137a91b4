// The straightforward transcription of kubelet's calculateHints (every mask of the enumeration
// domain, per-mask table lookups), kept as the reference for the randomized comparison with
// lib/memory's hint generation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/hints/numa_mask.h"
#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_policy.h"
#include "lib/memory/memory_state.h"

namespace topologyd::memory::testing {

inline const MemoryTable* RefTable(const MemoryState& state, int id, std::string_view type) {
  auto node = state.machine_state.find(id);
  if (node == state.machine_state.end()) return nullptr;
  auto t = node->second.memory_map.find(type);
  return t == node->second.memory_map.end() ? nullptr : &t->second;
}

inline uint64_t RefReusable(const MemoryState& state, std::string_view pod_uid,
                            const std::vector<int>& ids, const std::string& type) {
  auto pod = state.init_reusable.find(pod_uid);
  if (pod == state.init_reusable.end()) return 0;
  auto mask = pod->second.find(ids);
  if (mask == pod->second.end()) return 0;
  auto t = mask->second.find(type);
  return t == mask->second.end() ? 0 : t->second;
}

inline bool RefSameGroup(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// Masks by size, then lexicographic, at most `budget` of them.
template <typename Visit>
void RefIterateMasks(const std::vector<int>& positions, int64_t budget, Visit visit) {
  const int n = static_cast<int>(positions.size());
  for (int size = 1; size <= n; ++size) {
    std::vector<int> idx(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) idx[static_cast<size_t>(i)] = i;
    while (true) {
      if (--budget < 0) return;
      uint64_t bits = 0;
      for (int i : idx) bits |= uint64_t{1} << positions[static_cast<size_t>(i)];
      visit(bits);
      int i = size - 1;
      while (i >= 0 && idx[static_cast<size_t>(i)] == n - size + i) --i;
      if (i < 0) break;
      ++idx[static_cast<size_t>(i)];
      for (int j = i + 1; j < size; ++j) {
        idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
      }
    }
  }
}

inline std::map<std::string, hints::HintList> ReferenceCalculateHints(
    const MemoryState& state, std::string_view pod_uid,
    const std::map<std::string, uint64_t>& request) {
  std::vector<int> node_ids;
  for (const auto& [id, node] : state.machine_state) node_ids.push_back(id);
  const int n = static_cast<int>(node_ids.size());
  std::vector<int> positions;
  for (int pos = 0; pos < n && pos < hints::NumaMask::kMaxNodes; ++pos) {
    if (n <= kMaxExactNumaNodes) {
      positions.push_back(pos);
      continue;
    }
    for (const auto& [type, bytes] : request) {
      const MemoryTable* t = RefTable(state, node_ids[static_cast<size_t>(pos)], type);
      if (t != nullptr && t->allocatable > 0) {
        positions.push_back(pos);
        break;
      }
    }
  }
  const int64_t budget =
      static_cast<int>(positions.size()) <= kMaxExactNumaNodes ? INT64_MAX : kMaxMaskBudget;
  int min_size = n;
  std::vector<uint64_t> masks;
  RefIterateMasks(positions, budget, [&](uint64_t bits) {
    std::vector<int> ids;
    for (int pos : hints::NumaMask(bits).Ids()) ids.push_back(node_ids[static_cast<size_t>(pos)]);
    const bool single = ids.size() == 1;
    std::map<std::string, uint64_t> free, allocatable;
    for (int id : ids) {
      for (const auto& [type, bytes] : request) {
        const MemoryTable* t = RefTable(state, id, type);
        if (t == nullptr) continue;
        free[type] += t->free;
        allocatable[type] += t->allocatable;
      }
    }
    for (const auto& [type, bytes] : request) {
      if (allocatable[type] < bytes) return;
    }
    min_size = std::min(min_size, static_cast<int>(ids.size()));
    const NumaNodeState& first = state.machine_state.at(ids[0]);
    if (single && first.cells.size() > 1) return;
    if (!single) {
      for (int id : ids) {
        const NumaNodeState& node = state.machine_state.at(id);
        if (node.number_of_assignments == 0) continue;
        if (node.cells.size() == 1) return;
        if (!RefSameGroup(node.cells, ids)) return;
      }
    }
    for (const auto& [type, bytes] : request) {
      if (free[type] + RefReusable(state, pod_uid, ids, type) < bytes) return;
    }
    masks.push_back(bits);
  });
  // No fit: an empty list per requested type when no mask fits.
  std::map<std::string, hints::HintList> out;
  hints::ResourceHints list;
  for (uint64_t bits : masks) {
    list.hints.push_back(hints::TopologyHint{
        .affinity = hints::NumaMask(bits), .preferred = hints::NumaMask(bits).Count() == min_size});
  }
  for (const auto& [type, bytes] : request) out[type] = list;
  return out;
}

}  // namespace topologyd::memory::testing
