#include "lib/hints/expand.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>

namespace topologyd::hints {

std::vector<TopologyHint> Expand(const ResourceHints& hints) {
  if (!hints.upward_closed) return hints.hints;
  const uint64_t universe = hints.universe.bits();
  const int n = std::popcount(universe);
  if (n > kMaxExpandNodes) std::abort();  // Programming error: see the precondition.

  std::vector<uint64_t> generators;
  std::vector<uint64_t> preferred;
  for (const TopologyHint& h : hints.hints) {
    if (!h.affinity || !h.affinity->IsSubsetOf(hints.universe)) continue;
    generators.push_back(h.affinity->bits());
    if (h.preferred) preferred.push_back(h.affinity->bits());
  }
  std::vector<uint64_t> masks;
  // Walk the subsets of the universe through their compact index; deposit each into place.
  for (uint64_t index = 1; index < (uint64_t{1} << n); ++index) {
    uint64_t mask = 0;
    uint64_t rest = universe;
    for (uint64_t i = index; i != 0; i >>= 1) {
      uint64_t low = rest & (~rest + 1);
      if (i & 1) mask |= low;
      rest &= rest - 1;
    }
    for (uint64_t g : generators) {
      if ((g & ~mask) == 0) {
        masks.push_back(mask);
        break;
      }
    }
  }
  std::sort(masks.begin(), masks.end(),
            [](uint64_t a, uint64_t b) { return NumaMask(a).IsNarrowerThan(NumaMask(b)); });
  std::vector<TopologyHint> out;
  out.reserve(masks.size());
  for (uint64_t m : masks) {
    bool is_preferred = std::find(preferred.begin(), preferred.end(), m) != preferred.end();
    out.push_back(TopologyHint{NumaMask(m), is_preferred});
  }
  return out;
}

}  // namespace topologyd::hints
