#include "tests/unit/hints/reference_merge.h"

#include <bit>
#include <cstdint>
#include <optional>

namespace topologyd::hints::reference {
namespace {

int Count(uint64_t m) { return std::popcount(m); }

// Set bits in ascending order (kubelet's GetBits).
std::vector<int> GetBits(uint64_t m) {
  std::vector<int> bits;
  for (int i = 0; i < 64; ++i) {
    if ((m >> i) & 1) bits.push_back(i);
  }
  return bits;
}

// IsNarrowerThan: fewer bits; as many bits -> smaller integer.
bool IsNarrowerThan(uint64_t a, uint64_t b) {
  if (Count(a) == Count(b)) return a < b;
  return Count(a) < Count(b);
}

double Average(uint64_t m, const std::vector<std::vector<double>>& d) {
  if (m == 0) return 0;
  double sum = 0;
  double count = 0;
  const std::vector<int> bits = GetBits(m);
  for (int i : bits) {
    for (int j : bits) {
      sum += d[static_cast<size_t>(i)][static_cast<size_t>(j)];
      count++;
    }
  }
  return sum / count;
}

struct Hint {
  bool has_affinity;
  uint64_t affinity;
  bool preferred;
};

Hint FromTopologyHint(const TopologyHint& h) {
  return Hint{h.affinity.has_value(), h.affinity ? h.affinity->bits() : 0, h.preferred};
}

struct Merger {
  uint64_t default_affinity;
  bool closest;
  const std::vector<std::vector<double>>* distances;
  int k;

  uint64_t Narrowest(uint64_t a, uint64_t b) const { return IsNarrowerThan(a, b) ? a : b; }

  uint64_t Closest(uint64_t a, uint64_t b) const {
    if (Count(a) != Count(b)) return Narrowest(a, b);
    double avg_a = Average(a, *distances);
    double avg_b = Average(b, *distances);
    if (avg_a == avg_b) return a < b ? a : b;
    return avg_a < avg_b ? a : b;
  }

  // CompareNUMAAffinityMasks; returns true to keep `current`.
  bool Masks(const Hint& current, const Hint& candidate) const {
    if (candidate.affinity == current.affinity) return true;
    uint64_t best = closest ? Closest(current.affinity, candidate.affinity)
                            : Narrowest(current.affinity, candidate.affinity);
    return best == current.affinity;
  }

  // compare(): returns the better hint of the two.
  std::optional<Hint> Compare(const std::optional<Hint>& current, const Hint& candidate) const {
    if (Count(candidate.affinity) == 0) return current;
    if (!current) return candidate;
    if (!current->preferred && candidate.preferred) return candidate;
    if (current->preferred && !candidate.preferred) return current;
    if (current->preferred && candidate.preferred) {
      return Masks(*current, candidate) ? current : candidate;
    }
    int c = Count(current->affinity);
    int n = Count(candidate.affinity);
    if (c > k) return Masks(*current, candidate) ? current : candidate;  // case 1
    if (c == k) {                                                        // case 2
      if (n != k) return current;
      return Masks(*current, candidate) ? current : candidate;
    }
    if (n > k) return current;                                // 3a
    if (n == k) return candidate;                             // 3b
    if (n > c) return candidate;                              // 3ca
    if (n < c) return current;                                // 3cb
    return Masks(*current, candidate) ? current : candidate;  // 3cc
  }

  Hint MergePermutation(const std::vector<Hint>& permutation) const {
    uint64_t merged = default_affinity;
    bool preferred = true;
    bool have_first = false;
    uint64_t first = 0;
    for (const Hint& h : permutation) {
      if (h.has_affinity) {
        if (!have_first) {
          have_first = true;
          first = h.affinity;
        } else if (h.affinity != first) {
          preferred = false;
        }
        merged &= h.affinity;
      }
      if (!h.preferred) preferred = false;
    }
    return Hint{true, merged, preferred};
  }
};

std::vector<std::vector<Hint>> FilterProvidersHints(const MergeInput& input) {
  std::vector<std::vector<Hint>> lists;
  for (const ProviderHints& provider : input.providers) {
    if (!provider || provider->empty()) {
      lists.push_back({Hint{false, 0, true}});
      continue;
    }
    for (const auto& [resource, list] : *provider) {
      if (!list) {
        lists.push_back({Hint{false, 0, true}});
        continue;
      }
      std::vector<TopologyHint> hints = list->upward_closed ? ExpandPlain(*list) : list->hints;
      if (hints.empty()) {
        lists.push_back({Hint{false, 0, false}});
        continue;
      }
      std::vector<Hint> converted;
      for (const TopologyHint& h : hints) converted.push_back(FromTopologyHint(h));
      lists.push_back(converted);
    }
  }
  return lists;
}

std::vector<std::vector<Hint>> FilterSingleNumaHints(const std::vector<std::vector<Hint>>& in) {
  std::vector<std::vector<Hint>> out;
  for (const auto& list : in) {
    std::vector<Hint> kept;
    for (const Hint& h : list) {
      if (!h.preferred) continue;
      if (!h.has_affinity || Count(h.affinity) == 1) kept.push_back(h);
    }
    out.push_back(kept);
  }
  return out;
}

int MaxOfMinAffinityCounts(const std::vector<std::vector<Hint>>& lists) {
  int k = 0;
  for (const auto& list : lists) {
    bool found = false;
    uint64_t narrowest = 0;
    for (const Hint& h : list) {
      if (!h.has_affinity) continue;
      if (!found || IsNarrowerThan(h.affinity, narrowest)) narrowest = h.affinity;
      found = true;
    }
    if (found && Count(narrowest) > k) k = Count(narrowest);
  }
  return k;
}

}  // namespace

std::vector<TopologyHint> ExpandPlain(const ResourceHints& list) {
  if (!list.upward_closed) return list.hints;
  std::vector<TopologyHint> out;
  uint64_t u = list.universe.bits();
  // Every subset of u, by the classic (m - 1) & u walk, descending; order does not matter.
  for (uint64_t m = u; m != 0; m = (m - 1) & u) {
    bool contains = false;
    bool preferred = false;
    for (const TopologyHint& e : list.hints) {
      if (!e.affinity) continue;
      uint64_t g = e.affinity->bits();
      if ((g & ~u) != 0) continue;
      if ((g & ~m) == 0) contains = true;
      if (e.preferred && g == m) preferred = true;
    }
    if (contains) out.push_back(TopologyHint{NumaMask(m), preferred});
  }
  return out;
}

double PermutationCount(const MergeInput& input) {
  double total = 1;
  for (const auto& list : FilterProvidersHints(input)) total *= static_cast<double>(list.size());
  return total;
}

MergeResult ReferenceMerge(const MergeInput& input) {
  if (input.policy == Policy::kNone) return MergeResult{TopologyHint{std::nullopt, false}, true};
  uint64_t default_affinity = 0;
  for (int i = 0; i < input.num_nodes; ++i) default_affinity |= uint64_t{1} << i;
  const bool single = input.policy == Policy::kSingleNumaNode;

  std::vector<std::vector<Hint>> lists = FilterProvidersHints(input);
  if (single) lists = FilterSingleNumaHints(lists);

  Merger merger{default_affinity,
                input.options.prefer_closest_numa_nodes && !single && !input.distances.empty(),
                &input.distances, MaxOfMinAffinityCounts(lists)};

  std::optional<Hint> best;
  bool any_empty = false;
  for (const auto& list : lists) any_empty |= list.empty();
  if (!any_empty) {
    // Odometer over the cross product; the last list turns fastest.
    std::vector<size_t> index(lists.size(), 0);
    std::vector<Hint> permutation(lists.size());
    while (true) {
      for (size_t i = 0; i < lists.size(); ++i) permutation[i] = lists[i][index[i]];
      best = merger.Compare(best, merger.MergePermutation(permutation));
      size_t i = lists.size();
      while (i > 0) {
        --i;
        if (++index[i] < lists[i].size()) break;
        index[i] = 0;
        if (i == 0) {
          i = lists.size() + 1;  // wrapped around: done
          break;
        }
      }
      if (lists.empty() || i == lists.size() + 1) break;
    }
  }
  Hint result = best ? *best : Hint{true, default_affinity, false};

  MergeResult out;
  out.hint.preferred = result.preferred;
  if (single && result.affinity == default_affinity) {
    out.hint.affinity = std::nullopt;
  } else {
    out.hint.affinity = NumaMask(result.affinity);
  }
  out.admit = input.policy == Policy::kBestEffort ? true : result.preferred;
  return out;
}

}  // namespace topologyd::hints::reference
