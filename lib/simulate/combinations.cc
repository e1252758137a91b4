#include "lib/simulate/combinations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace topologyd::simulate {
namespace {

// Above this many subsets (2^16) to look at, a list is counted by its lower bound: counting
// must stay far cheaper than the admission it describes.
constexpr uint64_t kMaxCountingWork = uint64_t{1} << 16;

double CountSupersetsOfLarger(uint64_t universe, const std::vector<uint64_t>& minimal);

// Non-empty masks within `universe` containing at least one of `minimal`. One-node entries S
// (the usual case: a request that fits on one node) are counted in closed form: 2^n - 2^(n-|S|)
// masks meet S, and a mask that does not can only hold the entries disjoint from S.
double CountSupersets(uint64_t universe, const std::vector<uint64_t>& minimal) {
  uint64_t singles = 0;
  for (uint64_t g : minimal) {
    if (std::popcount(g) == 1) singles |= g;
  }
  if (singles == 0) return CountSupersetsOfLarger(universe, minimal);
  const int n = std::popcount(universe);
  const double meeting = std::ldexp(1.0, n) - std::ldexp(1.0, n - std::popcount(singles));
  std::vector<uint64_t> rest;
  for (uint64_t g : minimal) {
    if ((g & singles) == 0) rest.push_back(g);
  }
  return meeting + CountSupersetsOfLarger(universe & ~singles, rest);
}

double CountSupersetsOfLarger(uint64_t universe, const std::vector<uint64_t>& minimal) {
  const int n = std::popcount(universe);
  const size_t k = minimal.size();
  if (k == 0) return 0;
  // The cheaper of two exact counts, when one is cheap enough.
  if (k <= 16 && (uint64_t{1} << k) <= kMaxCountingWork && static_cast<int>(k) <= n) {
    // Inclusion-exclusion over the subsets of the minimal masks: the supersets of a union U
    // number 2^(n - |U|).
    double total = 0;
    for (uint64_t s = 1; s < (uint64_t{1} << k); ++s) {
      uint64_t u = 0;
      for (size_t i = 0; i < k; ++i) {
        if (s & (uint64_t{1} << i)) u |= minimal[i];
      }
      const double term = std::ldexp(1.0, n - std::popcount(u));
      total += (std::popcount(s) % 2 == 1) ? term : -term;
    }
    return total;
  }
  if ((uint64_t{1} << std::min(n, 63)) <= kMaxCountingWork) {
    double total = 0;
    for (uint64_t m = universe; m != 0; m = (m - 1) & universe) {
      for (uint64_t g : minimal) {
        if ((g & ~m) == 0) {
          total += 1;
          break;
        }
      }
    }
    return total;
  }
  int narrowest = 64;
  for (uint64_t g : minimal) narrowest = std::min(narrowest, std::popcount(g));
  return std::ldexp(1.0, n - narrowest);
}

}  // namespace

double KubeletListLength(const hints::HintList& list, hints::Policy policy) {
  if (!list.has_value() || list->hints.empty()) return 1;
  const bool single = policy == hints::Policy::kSingleNumaNode;
  if (!list->upward_closed) {
    if (!single) return static_cast<double>(list->hints.size());
    double kept = 0;
    for (const hints::TopologyHint& h : list->hints) {
      if (h.preferred && (!h.affinity || h.affinity->Count() == 1)) kept += 1;
    }
    return kept;
  }
  const uint64_t universe = list->universe.bits();
  std::vector<uint64_t> minimal;
  double single_preferred = 0;
  for (const hints::TopologyHint& h : list->hints) {
    if (!h.affinity || (h.affinity->bits() & ~universe) != 0 || h.affinity->bits() == 0) continue;
    minimal.push_back(h.affinity->bits());
    // In the expansion a mask is preferred iff it is a preferred entry's: the single-node
    // preferred hints kubelet keeps are exactly those entries.
    if (h.preferred && h.affinity->Count() == 1) single_preferred += 1;
  }
  return single ? single_preferred : CountSupersets(universe, minimal);
}

double KubeletCombinations(const admission::MergeStep& step, hints::Policy policy) {
  double product = 1;
  for (const admission::ProviderHintsEntry& p : step.providers) {
    if (!p.hints.has_value()) continue;  // kubelet's {any, preferred}: one hint
    for (const auto& entry : *p.hints) product *= KubeletListLength(entry.second, policy);
  }
  return product;
}

double KubeletCombinations(const admission::Explanation& explanation) {
  double total = 0;
  for (const admission::MergeStep& step : explanation.merges) {
    total += KubeletCombinations(step, explanation.policy);
  }
  return total;
}

}  // namespace topologyd::simulate
