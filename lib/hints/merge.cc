#include "lib/hints/merge.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "lib/hints/merge_internal.h"

#include "fmt/format.h"

namespace topologyd::hints {
namespace {

using internal::ReachEngine;

// Largest compressed universe for the dense engine: arrays of 2^22 uint64 (32 MiB).
constexpr int kMaxDenseClasses = 22;

// Population count without a libgcc call on baseline x86-64 (no POPCNT instruction).
inline int PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// LSD radix sort by bytes, skipping the bytes in which all values agree (masks of machines
// with few nodes differ in one or two bytes only). Same result as std::sort.
void RadixSort(std::vector<uint64_t>& v) {
  uint64_t differ = 0;
  for (uint64_t x : v) differ |= x ^ v.front();
  std::vector<uint64_t> tmp(v.size());
  for (int shift = 0; shift < 64; shift += 8) {
    if (((differ >> shift) & 0xFF) == 0) continue;
    size_t count[257] = {};
    for (uint64_t x : v) ++count[((x >> shift) & 0xFF) + 1];
    for (size_t i = 1; i < 257; ++i) count[i] += count[i - 1];
    for (uint64_t x : v) tmp[count[(x >> shift) & 0xFF]++] = x;
    v.swap(tmp);
  }
}

void SortUnique(std::vector<uint64_t>& v) {
  // Providers usually list masks in order already; skip the sort then.
  if (!std::is_sorted(v.begin(), v.end())) {
    // Long explicit lists (a memory provider's, in kubelet's lexicographic order) sort
    // faster by radix.
    constexpr size_t kRadixFrom = 512;
    if (v.size() >= kRadixFrom) {
      RadixSort(v);
    } else {
      std::sort(v.begin(), v.end());
    }
  }
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Keeps only the inclusion-minimal masks (an antichain), ordered by size, then value. Used
// where a mask stands for everything above it, so dropping supersets loses nothing.
//
// A mask can only be dominated by a kept mask with fewer nodes (distinct masks of equal size
// are never subsets of each other), so it is compared with those only; when they outnumber
// its own proper subsets, its subsets are looked up instead. Lists of C(N, k) equal-size
// masks (CPU hints spanning k nodes on many-node machines) then cost no comparisons at all.
void Minimalize(std::vector<uint64_t>& v) {
  SortUnique(v);
  if (!v.empty() && v.front() == 0) {
    v.assign(1, 0);
    return;
  }
  std::stable_sort(v.begin(), v.end(),
                   [](uint64_t a, uint64_t b) { return PopCount(a) < PopCount(b); });
  std::vector<uint64_t> kept;
  std::vector<uint64_t> smaller;  // kept masks with fewer nodes than the current size, sorted
  size_t smaller_end = 0;         // kept[0, smaller_end) are in `smaller`
  int size = -1;
  for (uint64_t x : v) {
    const int c = PopCount(x);
    if (c != size) {
      size = c;
      smaller.insert(smaller.end(), kept.begin() + static_cast<std::ptrdiff_t>(smaller_end),
                     kept.end());
      std::sort(smaller.begin(), smaller.end());
      smaller_end = kept.size();
    }
    bool dominated = false;
    if (c < 63 && (uint64_t{1} << c) < smaller.size()) {
      // Proper non-empty subsets of x.
      for (uint64_t sub = (x - 1) & x; sub != 0; sub = (sub - 1) & x) {
        if (std::binary_search(smaller.begin(), smaller.end(), sub)) {
          dominated = true;
          break;
        }
      }
    } else {
      for (uint64_t k : smaller) {
        if ((k & ~x) == 0) {
          dominated = true;
          break;
        }
      }
    }
    if (!dominated) kept.push_back(x);
  }
  v.swap(kept);
}

// One hint list as the merge sees it after kubelet's filtering (spec §3, §5.4).
struct List {
  bool upward_closed = false;
  // Explicit form: the distinct values `affinity AND default` of its hints (nil -> default),
  // zero removed. Only the set matters for reachability.
  std::vector<uint64_t> family;
  // Upward-closed form: inclusion-minimal generators and the universe.
  std::vector<uint64_t> generators;
  uint64_t universe = 0;
  // Both forms: whether a preferred nil-affinity hint exists, and the sorted distinct raw
  // masks of the preferred non-nil hints.
  bool has_preferred_nil = false;
  std::vector<uint64_t> preferred;
  // Size of the narrowest non-nil affinity (raw, as kubelet counts it); -1 if none.
  int min_count = -1;
};

class ListBuilder {
 public:
  ListBuilder(uint64_t default_mask, bool single_numa)
      : default_(default_mask), single_numa_(single_numa) {}

  // Adds one explicit list; false when the single-NUMA filter leaves it empty (then kubelet
  // has no permutation at all).
  bool AddExplicit(const std::vector<TopologyHint>& hints) {
    List l;
    l.family.reserve(hints.size());
    for (const TopologyHint& h : hints) {
      if (single_numa_ && !(h.preferred && (!h.affinity || PopCount(h.affinity->bits()) == 1))) {
        continue;
      }
      if (!h.affinity) {
        l.family.push_back(default_);
        l.has_preferred_nil |= h.preferred;
        continue;
      }
      uint64_t raw = h.affinity->bits();
      l.family.push_back(raw & default_);
      int count = PopCount(raw);
      if (l.min_count < 0 || count < l.min_count) l.min_count = count;
      if (h.preferred) l.preferred.push_back(raw);
    }
    if (single_numa_ && l.family.empty()) return false;
    Finish(l);
    return true;
  }

  bool AddNoPreference() { return AddExplicit({TopologyHint{std::nullopt, true}}); }
  bool AddCannotSatisfy() { return AddExplicit({TopologyHint{std::nullopt, false}}); }

  bool AddUpwardClosed(const ResourceHints& rh) {
    const uint64_t universe = rh.universe.bits();
    std::vector<uint64_t> generators;
    std::vector<uint64_t> preferred;
    for (const TopologyHint& h : rh.hints) {
      if (!h.affinity || !h.affinity->IsSubsetOf(rh.universe)) continue;
      generators.push_back(h.affinity->bits());
      if (h.preferred && !h.affinity->IsEmpty()) preferred.push_back(h.affinity->bits());
    }
    // The expanded list is empty: kubelet's "cannot be satisfied".
    if (generators.empty() || universe == 0) return AddCannotSatisfy();
    if (single_numa_) {
      // Only preferred single-node masks survive; in the expansion those are exactly the
      // preferred entries of size 1.
      std::vector<TopologyHint> kept;
      for (uint64_t p : preferred) {
        if (PopCount(p) == 1) kept.push_back(TopologyHint{NumaMask(p), true});
      }
      return AddExplicit(kept);
    }
    List l;
    l.upward_closed = true;
    l.universe = universe;
    for (uint64_t g : generators) {
      // The narrowest expanded mask containing g has max(|g|, 1) nodes.
      int count = std::max(PopCount(g), 1);
      if (l.min_count < 0 || count < l.min_count) l.min_count = count;
    }
    Minimalize(generators);
    l.generators = std::move(generators);
    l.preferred = std::move(preferred);
    SortUnique(l.preferred);
    lists_.push_back(std::move(l));
    return true;
  }

  std::vector<List>& lists() { return lists_; }

 private:
  void Finish(List& l) {
    SortUnique(l.family);
    if (!l.family.empty() && l.family.front() == 0) l.family.erase(l.family.begin());
    SortUnique(l.preferred);
    lists_.push_back(std::move(l));
  }

  uint64_t default_;
  bool single_numa_;
  std::vector<List> lists_;
};

// kubelet's filterProvidersHints (+ filterSingleNumaHints). nullopt: some list became empty.
std::optional<std::vector<List>> BuildLists(const MergeInput& input, uint64_t default_mask,
                                            bool single_numa) {
  ListBuilder b(default_mask, single_numa);
  for (const ProviderHints& provider : input.providers) {
    if (!provider || provider->empty()) {
      if (!b.AddNoPreference()) return std::nullopt;
      continue;
    }
    for (const auto& [resource, list] : *provider) {
      bool ok = true;
      if (!list) {
        ok = b.AddNoPreference();
      } else if (list->upward_closed) {
        ok = b.AddUpwardClosed(*list);
      } else if (list->hints.empty()) {
        ok = b.AddCannotSatisfy();
      } else {
        ok = b.AddExplicit(list->hints);
      }
      if (!ok) return std::nullopt;
    }
  }
  return std::move(b.lists());
}

// The tie-break among masks of equal size: average distance when prefer-closest applies,
// then the smaller integer (kubelet's Closest / Narrowest).
class TieBreak {
 public:
  TieBreak(bool closest, const std::vector<std::vector<double>>* distances)
      : closest_(closest), distances_(distances) {}
  bool closest() const { return closest_; }
  double Average(uint64_t m) const { return AverageDistance(NumaMask(m), *distances_); }
  // Strictly better (smaller) for two distinct masks of the same size.
  bool Less(uint64_t a, double avg_a, uint64_t b, double avg_b) const {
    if (closest_ && avg_a != avg_b) return avg_a < avg_b;
    return a < b;
  }

 private:
  bool closest_;
  const std::vector<std::vector<double>>* distances_;
};

// The best mask of some ranked set, ties broken by TieBreak.
struct Best {
  bool found = false;
  uint64_t mask = 0;
  double avg = 0;
};

void Offer(Best& best, uint64_t mask, const TieBreak& tie) {
  double avg = tie.closest() ? tie.Average(mask) : 0;
  if (!best.found || tie.Less(mask, avg, best.mask, best.avg)) {
    best = Best{true, mask, avg};
  }
}

// Phase 1 (spec §6.3): the best preferred candidate, if any.
std::optional<uint64_t> BestPreferred(const std::vector<List>& lists, uint64_t default_mask,
                                      const TieBreak& tie) {
  const List* pivot = nullptr;
  for (const List& l : lists) {
    if (!l.has_preferred_nil && l.preferred.empty()) return std::nullopt;
    if (!l.has_preferred_nil &&
        (pivot == nullptr || l.preferred.size() < pivot->preferred.size())) {
      pivot = &l;
    }
  }
  int best_count = std::numeric_limits<int>::max();
  Best best;
  auto offer = [&](uint64_t merged) {
    if (merged == 0) return;  // empty merges never win
    int count = PopCount(merged);
    if (count > best_count) return;
    if (count < best_count) {
      best_count = count;
      best = Best{};
    }
    Offer(best, merged, tie);
  };
  // A permutation is preferred iff every hint is preferred and all non-nil affinities are
  // one mask X; its merge is X AND default (or default when all are nil).
  auto consider = [&](uint64_t x) {
    for (const List& l : lists) {
      if (!l.has_preferred_nil && !std::binary_search(l.preferred.begin(), l.preferred.end(), x)) {
        return;
      }
    }
    offer(x & default_mask);
  };
  if (pivot != nullptr) {
    for (uint64_t x : pivot->preferred) consider(x);
  } else {
    for (const List& l : lists) {
      for (uint64_t x : l.preferred) consider(x);
    }
    offer(default_mask);  // every list has a preferred nil hint (also: zero lists)
  }
  if (!best.found) return std::nullopt;
  return best.mask;
}

// ---------------------------------------------------------------------------------------
// Phase 2: reachable ANDs of the explicit lists.

// Partition of the default mask's nodes into classes no family mask tells apart.
class Compression {
 public:
  Compression(uint64_t default_mask, const std::vector<const std::vector<uint64_t>*>& families) {
    classes_.push_back(default_mask);
    const size_t target = static_cast<size_t>(PopCount(default_mask));
    for (const auto* family : families) {
      for (uint64_t m : *family) {
        if (classes_.size() == target) break;
        const size_t n = classes_.size();
        for (size_t i = 0; i < n; ++i) {
          uint64_t c = classes_[i];
          uint64_t in = c & m;
          if (in != 0 && in != c) {
            classes_[i] = in;
            classes_.push_back(c & ~in);
          }
        }
      }
    }
    std::sort(classes_.begin(), classes_.end(),
              [](uint64_t a, uint64_t b) { return std::countr_zero(a) < std::countr_zero(b); });
    if (classes_.size() > static_cast<size_t>(kMaxDenseClasses)) return;
    // Every node its own class, in order (the default mask is positions 0..n-1): the
    // compressed index of a mask is the mask itself.
    identity_ = true;
    for (size_t j = 0; j < classes_.size(); ++j) identity_ &= classes_[j] == uint64_t{1} << j;
  }

  // Builds the lookup tables of Compress()/Decompress(); needed only by the dense engine.
  void PrepareTables() {
    if (identity_ || !compress_.empty()) return;
    compress_.assign(8 * 256, 0);
    decompress_.assign(3 * 256, 0);
    for (size_t j = 0; j < classes_.size(); ++j) {
      int rep = std::countr_zero(classes_[j]);
      for (int v = 0; v < 256; ++v) {
        if ((v >> (rep % 8)) & 1)
          compress_[static_cast<size_t>(rep / 8 * 256 + v)] |= uint32_t{1} << j;
      }
      for (int v = 0; v < 256; ++v) {
        if ((v >> (j % 8)) & 1) decompress_[j / 8 * 256 + static_cast<size_t>(v)] |= classes_[j];
      }
    }
  }

  int size() const { return static_cast<int>(classes_.size()); }

  // Index of a class-closed mask in the compressed universe.
  uint32_t Compress(uint64_t m) const {
    if (identity_) return static_cast<uint32_t>(m);
    uint32_t c = 0;
    for (size_t b = 0; b < 8; ++b) c |= compress_[b * 256 + ((m >> (8 * b)) & 0xff)];
    return c;
  }
  uint64_t Decompress(uint32_t c) const {
    if (identity_) return c;
    return decompress_[c & 0xff] | decompress_[256 + ((c >> 8) & 0xff)] |
           decompress_[512 + ((c >> 16) & 0xff)];
  }

 private:
  std::vector<uint64_t> classes_;
  bool identity_ = false;
  std::vector<uint32_t> compress_;    // [byte][value] -> compressed bits
  std::vector<uint64_t> decompress_;  // [byte][value] -> nodes
};

// One butterfly pass of the superset transforms: lo[j] += hi[j] (or -=).
template <bool kInverse>
void Pass(uint64_t* __restrict lo, const uint64_t* __restrict hi, size_t h) {
  for (size_t j = 0; j < h; ++j) {
    if constexpr (kInverse) {
      lo[j] -= hi[j];
    } else {
      lo[j] += hi[j];
    }
  }
}

// kInverse == false: f(S) := sum over T ⊇ S of f(T), in place (superset zeta transform).
// kInverse == true: its inverse (Möbius). Arithmetic is modulo 2^64, which is exact whenever
// the true results lie in [0, 2^64). The low passes run block by block so that they stay in
// the L1 cache.
template <bool kInverse>
void SupersetTransform(std::vector<uint64_t>& f) {
  constexpr size_t kBlock = 4096;
  const size_t size = f.size();
  if (size < 2) return;
  const size_t block = std::min(size, kBlock);
  uint64_t* data = f.data();
  for (size_t base = 0; base < size; base += block) {
    for (size_t i = base; i < base + block; i += 2) {
      if constexpr (kInverse) {
        data[i] -= data[i + 1];
      } else {
        data[i] += data[i + 1];
      }
    }
    for (size_t h = 2; h < block; h <<= 1) {
      for (size_t i = base; i < base + block; i += 2 * h) Pass<kInverse>(data + i, data + i + h, h);
    }
  }
  for (size_t h = block; h < size; h <<= 1) {
    for (size_t i = 0; i < size; i += 2 * h) Pass<kInverse>(data + i, data + i + h, h);
  }
}

void SupersetZeta(std::vector<uint64_t>& f) { SupersetTransform<false>(f); }
void SupersetMobius(std::vector<uint64_t>& f) { SupersetTransform<true>(f); }

// The set { default AND a_1 AND ... AND a_m : a_i in family_i } without the empty mask.
//
// Sparse engine: a sorted set, one step costs |reach| x |family|.
// Dense engine: with r the count of ways to reach each compressed mask, zeta(r AND-convolved
// with a) = zeta(r) * zeta(a) pointwise; counts stay exact while their bound fits 64 bits and
// are reset to 0/1 (Möbius, threshold, zeta) before it would not. One step costs
// O(n' 2^n') for n' compressed nodes.
std::vector<uint64_t> ReachablePoints(uint64_t default_mask,
                                      const std::vector<const std::vector<uint64_t>*>& families,
                                      ReachEngine engine) {
  if (default_mask == 0) return {};
  for (const auto* f : families) {
    if (f->empty()) return {};
  }
  std::vector<uint64_t> reach = {default_mask};
  if (families.empty()) return reach;

  Compression compression(default_mask, families);
  const int n = compression.size();
  const bool dense_possible = n <= kMaxDenseClasses;
  const size_t size = dense_possible ? size_t{1} << n : 0;
  const double dense_step_cost = dense_possible ? double(size) * (3.0 * n + 4.0) : 0;

  bool dense = false;
  std::vector<uint64_t> zr;  // zeta of the reach counts
  std::vector<uint64_t> za;
  uint64_t bound = 1;  // upper bound of every reach count
  std::vector<uint64_t> next;

  for (const auto* family : families) {
    if (!dense && dense_possible && engine != ReachEngine::kSparse &&
        (engine == ReachEngine::kDense ||
         double(reach.size()) * double(family->size()) > dense_step_cost)) {
      dense = true;
      compression.PrepareTables();
      zr.assign(size, 0);
      for (uint64_t r : reach) zr[compression.Compress(r)] = 1;
      bound = reach.size();
      SupersetZeta(zr);
    }
    if (dense) {
      za.assign(size, 0);
      for (uint64_t a : *family) za[compression.Compress(a)] = 1;
      const uint64_t count = family->size();
      SupersetZeta(za);
      if (bound > std::numeric_limits<uint64_t>::max() / count) {
        SupersetMobius(zr);
        bound = 0;
        for (uint64_t& v : zr) {
          v = v != 0;
          bound += v;
        }
        SupersetZeta(zr);
      }
      for (size_t i = 0; i < size; ++i) zr[i] *= za[i];
      bound *= count;
      continue;
    }
    next.clear();
    const size_t compact_at = std::max<size_t>(size_t{1} << 16, 4 * reach.size());
    for (uint64_t r : reach) {
      for (uint64_t a : *family) {
        uint64_t x = r & a;
        if (x != 0) next.push_back(x);
      }
      if (next.size() > compact_at) SortUnique(next);
    }
    SortUnique(next);
    reach.swap(next);
    if (reach.empty()) return reach;
  }
  if (dense) {
    SupersetMobius(zr);
    reach.clear();
    for (size_t s = 1; s < size; ++s) {
      if (zr[s] != 0) reach.push_back(compression.Decompress(static_cast<uint32_t>(s)));
    }
  }
  return reach;
}

// Rank of a non-preferred candidate size for BestNonPreferredAffinityCount k (spec §6.2):
// exactly k, then the largest size below k, then the smallest above k.
int SizeRank(int c, int k) { return c == k ? 0 : c < k ? k - c : c; }

// The best size available in [a, b] (a <= b).
int BestSizeIn(int a, int b, int k) { return (a <= k && k <= b) ? k : (b < k ? b : a); }

// The r lowest nodes of `free`.
uint64_t LowestNodes(uint64_t free, int r) {
  uint64_t out = 0;
  for (int i = 0; i < r; ++i) {
    uint64_t low = free & (~free + 1);
    out |= low;
    free &= ~low;
  }
  return out;
}

// Phase 2 (spec §6.4): no preferred candidate exists, so the candidates are all reachable
// non-empty masks. They form the union of the intervals [p AND g, p AND w] for p in `points`
// and g in `lows`; return the best one under the non-preferred order.
std::optional<uint64_t> BestNonPreferred(const std::vector<uint64_t>& points,
                                         const std::vector<uint64_t>& lows, uint64_t w, int k,
                                         const TieBreak& tie) {
  int best_rank = std::numeric_limits<int>::max();
  int best_size = 0;
  for (uint64_t p : points) {
    const uint64_t hi = p & w;
    if (hi == 0) continue;
    const int b = PopCount(hi);
    for (uint64_t g : lows) {
      const int a = std::max(PopCount(p & g), 1);
      const int c = BestSizeIn(a, b, k);
      const int rank = SizeRank(c, k);
      if (rank < best_rank) {
        best_rank = rank;
        best_size = c;
      }
    }
  }
  if (best_rank == std::numeric_limits<int>::max()) return std::nullopt;

  Best best;
  std::set<std::pair<uint64_t, uint64_t>> enumerated;
  for (uint64_t p : points) {
    const uint64_t hi = p & w;
    if (hi == 0) continue;
    const int b = PopCount(hi);
    for (uint64_t g : lows) {
      const uint64_t lo = p & g;
      const int lo_count = PopCount(lo);
      if (std::max(lo_count, 1) > best_size || b < best_size) continue;
      const int r = best_size - lo_count;
      const uint64_t free = hi & ~lo;
      if (!tie.closest()) {
        // The integer order is decided by the highest differing node: take the lowest ones.
        Offer(best, lo | LowestNodes(free, r), tie);
        continue;
      }
      if (r == 0) {
        Offer(best, lo, tie);
        continue;
      }
      if (!enumerated.emplace(lo, hi).second) continue;
      // Minimum average distance over the r-subsets of the free nodes: exhaustive.
      std::vector<uint64_t> nodes;
      for (uint64_t rest = free; rest != 0; rest &= rest - 1) nodes.push_back(rest & (~rest + 1));
      const int f = static_cast<int>(nodes.size());
      std::vector<int> idx(static_cast<size_t>(r));
      for (int i = 0; i < r; ++i) idx[static_cast<size_t>(i)] = i;
      while (true) {
        uint64_t m = lo;
        for (int i : idx) m |= nodes[static_cast<size_t>(i)];
        Offer(best, m, tie);
        // Next combination in lexicographic order of indices.
        int i = r - 1;
        while (i >= 0 && idx[static_cast<size_t>(i)] == f - r + i) --i;
        if (i < 0) break;
        ++idx[static_cast<size_t>(i)];
        for (int j = i + 1; j < r; ++j) {
          idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
        }
      }
    }
  }
  return best.mask;
}

MergeResult MergeImpl(const MergeInput& input, ReachEngine engine) {
  if (input.policy == Policy::kNone) return MergeResult{TopologyHint{std::nullopt, false}, true};
  const uint64_t default_mask = NumaMask::FirstN(input.num_nodes).bits();
  const bool single_numa = input.policy == Policy::kSingleNumaNode;
  const TieBreak tie(
      input.options.prefer_closest_numa_nodes && !single_numa && !input.distances.empty(),
      &input.distances);

  TopologyHint hint{NumaMask(default_mask), false};
  std::optional<std::vector<List>> lists = BuildLists(input, default_mask, single_numa);
  if (lists) {
    if (std::optional<uint64_t> preferred = BestPreferred(*lists, default_mask, tie)) {
      hint = TopologyHint{NumaMask(*preferred), true};
    } else {
      int k = 0;
      std::vector<const std::vector<uint64_t>*> families;
      std::vector<uint64_t> lows = {default_mask};
      uint64_t w = default_mask;
      std::vector<uint64_t> next;
      for (const List& l : *lists) {
        k = std::max(k, l.min_count);
        if (!l.upward_closed) {
          // A list offering only "any node" changes nothing.
          if (!(l.family.size() == 1 && l.family[0] == default_mask)) families.push_back(&l.family);
          continue;
        }
        next.clear();
        for (uint64_t g0 : lows) {
          for (uint64_t g : l.generators) next.push_back(g0 & g);
        }
        Minimalize(next);
        lows.swap(next);
        w &= l.universe;
      }
      std::vector<uint64_t> points = ReachablePoints(default_mask, families, engine);
      if (std::optional<uint64_t> m = BestNonPreferred(points, lows, w, k, tie)) {
        hint = TopologyHint{NumaMask(*m), false};
      }
    }
  }
  if (single_numa && hint.affinity && hint.affinity->bits() == default_mask) {
    hint.affinity = std::nullopt;
  }
  return MergeResult{hint, Admits(input.policy, hint.preferred)};
}

}  // namespace

double AverageDistance(NumaMask mask, const std::vector<std::vector<double>>& distances) {
  if (mask.IsEmpty()) return 0;
  const std::vector<int> ids = mask.Ids();
  double sum = 0;
  double count = 0;
  for (int i : ids) {
    for (int j : ids) {
      if (static_cast<size_t>(i) < distances.size() &&
          static_cast<size_t>(j) < distances[static_cast<size_t>(i)].size()) {
        sum += distances[static_cast<size_t>(i)][static_cast<size_t>(j)];
      }
      count += 1;
    }
  }
  return sum / count;
}

absl::Status ValidateMergeInput(const MergeInput& input) {
  if (input.num_nodes < 0 || input.num_nodes > NumaMask::kMaxNodes) {
    return absl::InvalidArgumentError(fmt::format("{} NUMA nodes: at most {} are supported",
                                                  input.num_nodes, NumaMask::kMaxNodes));
  }
  if (!input.distances.empty()) {
    if (input.distances.size() != static_cast<size_t>(input.num_nodes)) {
      return absl::InvalidArgumentError(
          fmt::format("the distance matrix has {} rows for {} NUMA nodes", input.distances.size(),
                      input.num_nodes));
    }
    for (size_t i = 0; i < input.distances.size(); ++i) {
      if (input.distances[i].size() != static_cast<size_t>(input.num_nodes)) {
        return absl::InvalidArgumentError(
            fmt::format("row {} of the distance matrix has {} entries for {} NUMA nodes", i,
                        input.distances[i].size(), input.num_nodes));
      }
    }
  }
  if (input.options.prefer_closest_numa_nodes && input.distances.empty() &&
      (input.policy == Policy::kBestEffort || input.policy == Policy::kRestricted)) {
    return absl::InvalidArgumentError(
        "prefer-closest-numa-nodes needs the NUMA distance matrix (\"distances\")");
  }
  return absl::OkStatus();
}

MergeResult Merge(const MergeInput& input) { return MergeImpl(input, ReachEngine::kAuto); }

namespace internal {
MergeResult MergeWithEngineForTest(const MergeInput& input, ReachEngine engine) {
  return MergeImpl(input, engine);
}
}  // namespace internal

}  // namespace topologyd::hints
