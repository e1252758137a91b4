#include "lib/cpu/take_distributed.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "fmt/format.h"

#include "lib/cpu/take_packed.h"

namespace topologyd::cpu {
namespace {

// Calls `visit` on every k-subset of `items` in lexicographic order of positions; stops when
// `visit` returns false.
bool IterateCombinationsHelper(const std::vector<int>& items, size_t k, size_t start,
                               std::vector<int>& accum,
                               const std::function<bool(const std::vector<int>&)>& visit) {
  if (k == 0) return visit(accum);
  for (size_t i = start; i + k <= items.size(); ++i) {
    accum.push_back(items[i]);
    const bool go_on = IterateCombinationsHelper(items, k - 1, i + 1, accum, visit);
    accum.pop_back();
    if (!go_on) return false;
  }
  return true;
}

void IterateCombinations(const std::vector<int>& items, int k,
                         const std::function<bool(const std::vector<int>&)>& visit) {
  if (k < 1) return;
  std::vector<int> accum;
  IterateCombinationsHelper(items, static_cast<size_t>(k), 0, accum, visit);
}

double Round3(double value) { return std::round(value * 1000) / 1000; }

// Population standard deviation with kubelet's rounding: the mean is rounded to 3 decimals
// before use, and so is the result.
double StandardDeviation(const std::map<int, int>& values) {
  double sum = 0;
  for (const auto& [key, value] : values) sum += value;
  const double mean = Round3(sum / static_cast<double>(values.size()));
  double squares = 0;
  for (const auto& [key, value] : values) {
    squares += (value - mean) * (value - mean);
  }
  return Round3(std::sqrt(squares / static_cast<double>(values.size())));
}

// Hands out `remainder` CPUs round robin over `subset` in groups of `group`, in place.
// Returns false where kubelet's loop would never end (a round with no progress).
bool DistributeRemainder(std::map<int, int>& after, const std::vector<int>& subset, int remainder,
                         int group) {
  while (remainder > 0) {
    bool progress = false;
    for (int numa : subset) {
      if (remainder == 0) break;
      if (after[numa] < group) continue;
      after[numa] -= group;
      remainder -= group;
      progress = true;
    }
    if (!progress) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<CpuSet> TakeByTopologyNumaDistributed(const CpuTopology& topology,
                                                     const CpuSet& available, int num_cpus,
                                                     int cpu_group_size,
                                                     CpuSortingStrategy strategy) {
  const int group = cpu_group_size < 1 ? 1 : cpu_group_size;
  if (num_cpus % group != 0) {
    return TakeByTopologyNumaPacked(topology, available, num_cpus, strategy, false);
  }
  CpuAccumulator acc(topology, available, num_cpus, strategy);
  if (acc.IsSatisfied()) return acc.result();
  if (acc.IsFailed()) return NotEnoughCpusError(num_cpus, available.Size());

  const std::vector<int> numas = acc.SortedNumaNodes();
  std::map<int, int> free_count;
  for (int numa : numas) free_count[numa] = acc.FreeCpusInNuma(numa).Size();

  // How many NUMA nodes the request needs at least (if every node had its share of groups)
  // and at most (one group per node).
  const int total_cpus = topology.Cpus().Size();
  const int total_numas = static_cast<int>(topology.NumaNodes().size());
  const int groups_total = (total_cpus - 1) / group + 1;
  const int groups_per_numa = (groups_total - 1) / total_numas + 1;
  const int groups_needed = (acc.need() - 1) / group + 1;
  const int min_k = (groups_needed - 1) / groups_per_numa + 1;
  const int max_k = std::min(groups_needed, static_cast<int>(free_count.size()));

  for (int k = min_k; k <= max_k; ++k) {
    double best = std::numeric_limits<double>::max();
    std::optional<std::vector<int>> best_combo;
    std::vector<int> best_remainder;
    IterateCombinations(numas, k, [&](const std::vector<int>& combo) {
      if (best == 0) return false;
      int combo_groups = 0;
      for (int numa : combo) combo_groups += free_count[numa] / group;
      if (acc.free_cpus().Intersection(topology.CpusInNumaNodes(combo)).Size() < num_cpus) {
        return true;
      }
      if (combo_groups * group < num_cpus) return true;
      const int distribution = (num_cpus / static_cast<int>(combo.size()) / group) * group;
      for (int numa : combo) {
        if (free_count[numa] < distribution) return true;
      }
      std::map<int, int> after = free_count;
      for (int numa : combo) after[numa] -= distribution;
      const int remainder = num_cpus - distribution * static_cast<int>(combo.size());
      std::vector<int> remainder_combo;
      for (int numa : combo) {
        if (after[numa] >= group) remainder_combo.push_back(numa);
      }
      double local_best = std::numeric_limits<double>::max();
      std::vector<int> local_remainder;
      if (remainder == 0) local_best = StandardDeviation(after);
      for (int r = static_cast<int>(remainder_combo.size()); remainder > 0 && r >= 1; --r) {
        IterateCombinations(remainder_combo, r, [&](const std::vector<int>& subset) {
          std::map<int, int> trial = after;
          int subset_free = 0;
          for (int numa : subset) subset_free += trial[numa];
          if (subset_free < remainder) return true;
          if (!DistributeRemainder(trial, subset, remainder, group)) return true;
          const double balance = StandardDeviation(trial);
          if (balance < local_best) {
            local_best = balance;
            local_remainder = subset;
          }
          return true;
        });
      }
      if (local_best < best) {
        best = local_best;
        best_remainder = local_remainder;
        best_combo = combo;
      }
      return true;
    });
    if (!best_combo.has_value()) continue;

    const std::vector<int>& combo = *best_combo;
    const std::vector<int>& remainder_numas = best_remainder;
    const int distribution = (num_cpus / static_cast<int>(combo.size()) / group) * group;
    for (int numa : combo) {
      // kubelet ignores errors of these inner calls (an error yields the empty set).
      absl::StatusOr<CpuSet> cpus = TakeByTopologyNumaPacked(topology, acc.FreeCpusInNuma(numa),
                                                             distribution, strategy, false);
      acc.Take(cpus.ok() ? *cpus : CpuSet());
    }
    int remainder = num_cpus - distribution * static_cast<int>(combo.size());
    while (remainder > 0) {
      bool progress = false;
      for (int numa : remainder_numas) {
        if (remainder == 0) break;
        CpuSet free_in_numa = acc.FreeCpusInNuma(numa);
        if (free_in_numa.Size() < group) continue;
        absl::StatusOr<CpuSet> cpus =
            TakeByTopologyNumaPacked(topology, free_in_numa, group, strategy, false);
        acc.Take(cpus.ok() ? *cpus : CpuSet());
        remainder -= group;
        progress = true;
      }
      if (!progress) {
        // kubelet would loop forever here; take the packed choice instead.
        return TakeByTopologyNumaPacked(topology, available, num_cpus, strategy, false);
      }
    }
    if (acc.need() > 0) {
      return absl::InternalError(
          fmt::format("accounting error, not enough CPUs allocated, remaining: {}", acc.need()));
    }
    if (acc.need() < 0) {
      return absl::InternalError(
          fmt::format("accounting error, too many CPUs allocated, remaining: {}", acc.need()));
    }
    return acc.result();
  }
  return TakeByTopologyNumaPacked(topology, available, num_cpus, strategy, false);
}

}  // namespace topologyd::cpu
