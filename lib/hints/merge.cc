#include "lib/hints/merge.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"

#include "lib/hints/merge_internal.h"

namespace topologyd::hints {
namespace {

using internal::MergeStats;
using internal::ReachEngine;

// Population count without a libgcc call on baseline x86-64 (no POPCNT instruction).
inline int PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// The work of one merge, counted against its MergeLimits where the merge can blow up (the
// reachable sets, the antichains, the dense tables, the prefer-closest enumeration); the
// input-linear parts are not counted. The first overrun is kept: a function that sees false
// returns at once with a partial result, which MergeImpl() discards for the status.
// `where` is a callable giving the place in words; it is only called on an overrun.
class Budget {
 public:
  Budget(const MergeLimits& limits, int num_nodes) : limits_(limits), num_nodes_(num_nodes) {}

  // Adds `steps` elementary steps.
  template <typename Where>
  bool Spend(uint64_t steps, const Where& where) {
    steps_ = SaturatingAdd(steps_, steps);
    if (steps_ <= limits_.max_steps) return true;
    Fail(fmt::format("hint merge exceeds its work limit: more than {} steps {} on {} NUMA nodes",
                     limits_.max_steps, where(), num_nodes_));
    return false;
  }

  // Records that `masks` masks are held at once.
  template <typename Where>
  bool Hold(uint64_t masks, const Where& where) {
    peak_masks_ = std::max(peak_masks_, masks);
    if (masks <= limits_.max_masks) return true;
    Fail(fmt::format(
        "hint merge exceeds its memory limit: {} NUMA masks held {} on {} NUMA nodes (limit {} "
        "masks)",
        masks, where(), num_nodes_, limits_.max_masks));
    return false;
  }

  bool CanHold(uint64_t masks) const { return masks <= limits_.max_masks; }
  uint64_t max_masks() const { return limits_.max_masks; }
  bool exhausted() const { return !status_.ok(); }
  const absl::Status& status() const { return status_; }
  MergeStats stats() const { return MergeStats{peak_masks_, steps_}; }

 private:
  void Fail(std::string message) {
    if (status_.ok()) status_ = absl::ResourceExhaustedError(std::move(message));
  }

  MergeLimits limits_;
  int num_nodes_;
  uint64_t steps_ = 0;
  uint64_t peak_masks_ = 0;
  absl::Status status_;
};

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
// Its scratch is a few copies of `v`, which the caller has counted; the comparisons are
// counted here (a list of masks of mixed sizes can cost |v|^2 of them).
template <typename Where>
void Minimalize(std::vector<uint64_t>& v, Budget& budget, const Where& where) {
  if (!budget.Spend(2 * v.size(), where)) return;  // the two sorts
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
      if (!budget.Spend(smaller.size(), where)) return;
      std::sort(smaller.begin(), smaller.end());
      smaller_end = kept.size();
    }
    bool dominated = false;
    uint64_t compared = 0;
    if (c < 63 && (uint64_t{1} << c) < smaller.size()) {
      // Proper non-empty subsets of x.
      for (uint64_t sub = (x - 1) & x; sub != 0; sub = (sub - 1) & x) {
        ++compared;
        if (std::binary_search(smaller.begin(), smaller.end(), sub)) {
          dominated = true;
          break;
        }
      }
    } else {
      for (uint64_t k : smaller) {
        ++compared;
        if ((k & ~x) == 0) {
          dominated = true;
          break;
        }
      }
    }
    if (!budget.Spend(compared, where)) return;
    if (!dominated) kept.push_back(x);
  }
  v.swap(kept);
}

// One hint list as the merge sees it after kubelet's filtering (docs/merge.md, "Filtering"
// and the single-numa-node filter under "Policies").
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
  // Where the list came from, for messages: its position among all lists, the provider's
  // position (both from 0) and name ("" when the input names none), and the resource (""
  // for a provider without a map).
  size_t index = 0;
  size_t provider = 0;
  std::string_view provider_name;
  std::string_view resource;
};

// "hint list 3 of 4 (provider 2, resource "memory")", counting from 1 as people do, or
// "(provider "memory", ...)" when the provider has a name.
std::string ListName(const List& l, size_t lists) {
  const std::string provider = l.provider_name.empty()
                                   ? fmt::format("provider {}", l.provider + 1)
                                   : fmt::format("provider \"{}\"", l.provider_name);
  if (l.resource.empty()) {
    return fmt::format("hint list {} of {} ({})", l.index + 1, lists, provider);
  }
  return fmt::format("hint list {} of {} ({}, resource \"{}\")", l.index + 1, lists, provider,
                     l.resource);
}

class ListBuilder {
 public:
  ListBuilder(uint64_t default_mask, bool single_numa, size_t lists, Budget& budget)
      : default_(default_mask), single_numa_(single_numa), total_(lists), budget_(budget) {}

  // The provider and resource of the lists added next.
  void SetSource(size_t provider, std::string_view provider_name, std::string_view resource) {
    provider_ = provider;
    provider_name_ = provider_name;
    resource_ = resource;
  }

  // Adds one explicit list; false when the single-NUMA filter leaves it empty (then kubelet
  // has no permutation at all).
  bool AddExplicit(const std::vector<TopologyHint>& hints) {
    List l = NewList();
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
    List l = NewList();
    l.upward_closed = true;
    l.universe = universe;
    for (uint64_t g : generators) {
      // The narrowest expanded mask containing g has max(|g|, 1) nodes.
      int count = std::max(PopCount(g), 1);
      if (l.min_count < 0 || count < l.min_count) l.min_count = count;
    }
    const size_t count = generators.size();
    Minimalize(generators, budget_, [&] {
      return fmt::format("while reducing the {} masks of {} to the minimal ones", count,
                         ListName(l, total_));
    });
    l.generators = std::move(generators);
    l.preferred = std::move(preferred);
    SortUnique(l.preferred);
    lists_.push_back(std::move(l));
    return true;
  }

  std::vector<List>& lists() { return lists_; }

 private:
  List NewList() const {
    List l;
    l.index = lists_.size();
    l.provider = provider_;
    l.provider_name = provider_name_;
    l.resource = resource_;
    return l;
  }

  void Finish(List& l) {
    SortUnique(l.family);
    if (!l.family.empty() && l.family.front() == 0) l.family.erase(l.family.begin());
    SortUnique(l.preferred);
    lists_.push_back(std::move(l));
  }

  uint64_t default_;
  bool single_numa_;
  size_t total_;
  Budget& budget_;
  size_t provider_ = 0;
  std::string_view provider_name_;
  std::string_view resource_;
  std::vector<List> lists_;
};

// The number of hint lists BuildLists() makes of `input` (for "list k of n" in messages).
size_t CountLists(const MergeInput& input) {
  size_t n = 0;
  for (const ProviderHints& provider : input.providers) {
    n += !provider || provider->empty() ? 1 : provider->size();
  }
  return n;
}

// kubelet's filterProvidersHints (+ filterSingleNumaHints). nullopt: some list became empty.
// A list left partial by an exhausted budget is kept as it is; the caller checks the budget.
std::optional<std::vector<List>> BuildLists(const MergeInput& input, uint64_t default_mask,
                                            bool single_numa, Budget& budget) {
  ListBuilder b(default_mask, single_numa, CountLists(input), budget);
  for (size_t p = 0; p < input.providers.size(); ++p) {
    const ProviderHints& provider = input.providers[p];
    const std::string_view name =
        p < input.provider_names.size() ? std::string_view(input.provider_names[p]) : "";
    b.SetSource(p, name, "");
    if (!provider || provider->empty()) {
      if (!b.AddNoPreference()) return std::nullopt;
      continue;
    }
    for (const auto& [resource, list] : *provider) {
      b.SetSource(p, name, resource);
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

// Phase 1 (docs/merge.md, "Algorithm"): the best preferred candidate, if any.
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
    if (classes_.size() > static_cast<size_t>(kMaxDenseMergeNodes)) return;
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

// The set { default AND a_1 AND ... AND a_m : a_i in family_i } without the empty mask, built
// list by list by one of the two engines below.
//
// Sparse engine: a sorted set, one step costs |reach| x |family|.
// Dense engine: with r the count of ways to reach each compressed mask, zeta(r AND-convolved
// with a) = zeta(r) * zeta(a) pointwise; counts stay exact while their bound fits 64 bits and
// are reset to 0/1 (Möbius, threshold, zeta) before it would not. One step costs
// O(n' 2^n') for n' compressed nodes; it holds two tables of 2^n' entries.
class Reach {
 public:
  Reach(uint64_t default_mask, const std::vector<const List*>& lists, size_t total_lists,
        ReachEngine engine, Budget& budget)
      : lists_(lists),
        total_lists_(total_lists),
        engine_(engine),
        budget_(budget),
        compression_(default_mask, Families(lists)),
        n_(compression_.size()),
        size_(n_ <= kMaxDenseMergeNodes ? size_t{1} << n_ : 0),
        reach_{default_mask} {}

  // The reachable non-empty masks; partial when the budget ran out.
  std::vector<uint64_t> Run() {
    for (const List* l : lists_) {
      if (!dense_ && UseDense(l->family.size()) && !StartDense(*l)) return {};
      if (!(dense_ ? DenseStep(*l) : SparseStep(*l))) return {};
      if (reach_.empty()) return reach_;
    }
    if (dense_) FinishDense();
    return std::move(reach_);
  }

 private:
  static std::vector<const std::vector<uint64_t>*> Families(const std::vector<const List*>& ls) {
    std::vector<const std::vector<uint64_t>*> out;
    for (const List* l : ls) out.push_back(&l->family);
    return out;
  }

  // Switch to the dense engine for the rest of the lists when a sparse step would cost more
  // than a dense one, and the two tables fit in the budget (the sparse engine is exact too,
  // and within its own budget it may still finish).
  bool UseDense(size_t family_size) const {
    if (size_ == 0 || engine_ == ReachEngine::kSparse) return false;
    if (engine_ == ReachEngine::kDense) return true;
    const double dense_step_cost = double(size_) * (3.0 * n_ + 4.0);
    return budget_.CanHold(2 * uint64_t{size_}) &&
           double(reach_.size()) * double(family_size) > dense_step_cost;
  }

  // Steps of one superset transform: n' passes of 2^n' / 2 additions.
  uint64_t TransformSteps() const { return uint64_t{size_} / 2 * static_cast<uint64_t>(n_); }

  auto Where(const List& l) const {
    return [this, &l] {
      const std::string list = ListName(l, total_lists_);
      if (dense_) {
        return fmt::format("while adding {} by transform over the 2^{} sets of {} node classes",
                           list, n_, n_);
      }
      return fmt::format("while adding the {} masks of {} to {} reachable masks", l.family.size(),
                         list, reach_.size());
    };
  }

  bool StartDense(const List& l) {
    dense_ = true;
    if (!budget_.Hold(2 * uint64_t{size_} + reach_.size(), Where(l))) return false;
    if (!budget_.Spend(reach_.size() + TransformSteps(), Where(l))) return false;
    compression_.PrepareTables();
    zr_.assign(size_, 0);
    for (uint64_t r : reach_) zr_[compression_.Compress(r)] = 1;
    bound_ = reach_.size();
    SupersetZeta(zr_);
    return true;
  }

  bool DenseStep(const List& l) {
    const uint64_t count = l.family.size();
    if (!budget_.Spend(count + TransformSteps() + size_, Where(l))) return false;
    za_.assign(size_, 0);
    for (uint64_t a : l.family) za_[compression_.Compress(a)] = 1;
    SupersetZeta(za_);
    if (bound_ > std::numeric_limits<uint64_t>::max() / count) {
      if (!budget_.Spend(2 * TransformSteps() + size_, Where(l))) return false;
      SupersetMobius(zr_);
      bound_ = 0;
      for (uint64_t& v : zr_) {
        v = v != 0;
        bound_ += v;
      }
      SupersetZeta(zr_);
    }
    for (size_t i = 0; i < size_; ++i) zr_[i] *= za_[i];
    bound_ *= count;
    return true;
  }

  // reach_ AND family, deduplicated. The new set is compacted whenever it grows past four
  // times the old one (or what the budget allows), so the buffer stays near the set's size.
  bool SparseStep(const List& l) {
    const std::vector<uint64_t>& family = l.family;
    next_.clear();
    const uint64_t compact_at = std::min<uint64_t>(
        std::max<size_t>(size_t{1} << 16, 4 * reach_.size()), budget_.max_masks());
    const auto where = Where(l);
    for (uint64_t r : reach_) {
      if (!budget_.Spend(family.size(), where)) return false;
      for (uint64_t a : family) {
        uint64_t x = r & a;
        if (x != 0) next_.push_back(x);
      }
      if (next_.size() > compact_at && !Compact(where)) return false;
    }
    if (!Compact(where)) return false;
    reach_.swap(next_);
    return true;
  }

  template <typename W>
  bool Compact(const W& where) {
    if (!budget_.Spend(next_.size(), where)) return false;
    SortUnique(next_);
    return budget_.Hold(reach_.size() + next_.size(), where);
  }

  void FinishDense() {
    const auto where = [this] {
      return fmt::format("while listing the reachable masks of {} hint lists over {} node classes",
                         total_lists_, n_);
    };
    za_ = {};  // only zr_ and the list are held from here on
    if (!budget_.Spend(TransformSteps() + size_, where)) return;
    SupersetMobius(zr_);
    reach_.clear();
    for (size_t s = 1; s < size_; ++s) {
      if (zr_[s] != 0) reach_.push_back(compression_.Decompress(static_cast<uint32_t>(s)));
    }
    budget_.Hold(size_ + reach_.size(), where);
  }

  const std::vector<const List*>& lists_;
  size_t total_lists_;
  ReachEngine engine_;
  Budget& budget_;
  Compression compression_;
  int n_;        // compressed nodes
  size_t size_;  // dense table size 2^n_, 0 when the dense engine is impossible
  std::vector<uint64_t> reach_;
  std::vector<uint64_t> next_;
  bool dense_ = false;
  std::vector<uint64_t> zr_;  // zeta of the reach counts
  std::vector<uint64_t> za_;
  uint64_t bound_ = 1;  // upper bound of every reach count
};

std::vector<uint64_t> ReachablePoints(uint64_t default_mask, const std::vector<const List*>& lists,
                                      size_t total_lists, ReachEngine engine, Budget& budget) {
  if (default_mask == 0) return {};
  for (const List* l : lists) {
    if (l->family.empty()) return {};
  }
  if (lists.empty()) return {default_mask};
  return Reach(default_mask, lists, total_lists, engine, budget).Run();
}

// Rank of a non-preferred candidate size for BestNonPreferredAffinityCount k (compare()):
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

// Phase 2 (docs/merge.md, "Algorithm"): no preferred candidate exists, so the candidates are all
// reachable non-empty masks. They form the union of the intervals [p AND g, p AND w] for p in
// `points` and g in `lows`; ChooseNonPreferred() returns the best one under the non-preferred
// order.
class NonPreferredChoice {
 public:
  NonPreferredChoice(const std::vector<uint64_t>& points, const std::vector<uint64_t>& lows,
                     uint64_t w, int k, const TieBreak& tie, Budget& budget)
      : points_(points), lows_(lows), w_(w), k_(k), tie_(tie), budget_(budget) {}

  // nullopt when there is no candidate (or the budget ran out).
  std::optional<uint64_t> Choose() {
    const std::optional<int> size = BestSize();
    if (!size) return std::nullopt;
    Best best;
    const bool done = ForEachInterval([&](uint64_t p, uint64_t hi, int b, uint64_t g) {
      const uint64_t lo = p & g;
      const int lo_count = PopCount(lo);
      if (std::max(lo_count, 1) > *size || b < *size) return true;
      const int r = *size - lo_count;
      const uint64_t free = hi & ~lo;
      if (!tie_.closest()) {
        // The integer order is decided by the highest differing node: take the lowest ones.
        Offer(best, lo | LowestNodes(free, r), tie_);
      } else if (r == 0) {
        Offer(best, lo, tie_);
      } else if (enumerated_.emplace(lo, hi).second) {
        return Closest(best, lo, free, r);
      }
      return true;
    });
    if (!done) return std::nullopt;
    return best.mask;
  }

 private:
  // Calls visit(p, hi, |hi|, g) for every reachable point p with a non-empty hi = p & w and
  // every minimal mask g, charging the budget per point. False when the budget ran out or
  // `visit` returned false.
  template <typename Visit>
  bool ForEachInterval(const Visit& visit) {
    for (uint64_t p : points_) {
      const uint64_t hi = p & w_;
      if (hi == 0) continue;
      if (!budget_.Spend(lows_.size(), [this] { return Scanning(); })) return false;
      const int b = PopCount(hi);
      for (uint64_t g : lows_) {
        if (!visit(p, hi, b, g)) return false;
      }
    }
    return true;
  }

  std::string Scanning() const {
    return fmt::format("while choosing among {} reachable masks and {} minimal masks",
                       points_.size(), lows_.size());
  }

  // The best size any interval offers (the sizes of [lo, hi] are [max(|lo|, 1), |hi|]).
  std::optional<int> BestSize() {
    int best_rank = std::numeric_limits<int>::max();
    int best_size = 0;
    const bool done = ForEachInterval([&](uint64_t p, uint64_t /*hi*/, int b, uint64_t g) {
      const int a = std::max(PopCount(p & g), 1);
      const int c = BestSizeIn(a, b, k_);
      const int rank = SizeRank(c, k_);
      if (rank < best_rank) {
        best_rank = rank;
        best_size = c;
      }
      return true;
    });
    if (!done) return std::nullopt;
    if (best_rank == std::numeric_limits<int>::max()) return std::nullopt;
    return best_size;
  }

  // prefer-closest: the minimum average distance over lo plus the r-subsets of `free`,
  // exhaustively. False when the budget ran out.
  bool Closest(Best& best, uint64_t lo, uint64_t free, int r) {
    const auto where = [&] {
      return fmt::format(
          "while comparing the average distances of {}-node sets within {} nodes "
          "(prefer-closest-numa-nodes, {} intervals)",
          PopCount(lo) + r, PopCount(lo | free), enumerated_.size());
    };
    if (!budget_.Hold(points_.size() + lows_.size() + enumerated_.size(), where)) return false;
    std::vector<uint64_t> nodes;
    for (uint64_t rest = free; rest != 0; rest &= rest - 1) nodes.push_back(rest & (~rest + 1));
    const int f = static_cast<int>(nodes.size());
    // One average costs |mask|^2 distance look-ups.
    const uint64_t width = static_cast<uint64_t>(PopCount(lo) + r);
    const uint64_t steps_per_set = width * width;
    std::vector<int> idx(static_cast<size_t>(r));
    for (int i = 0; i < r; ++i) idx[static_cast<size_t>(i)] = i;
    while (true) {
      if (!budget_.Spend(steps_per_set, where)) return false;
      uint64_t m = lo;
      for (int i : idx) m |= nodes[static_cast<size_t>(i)];
      Offer(best, m, tie_);
      // Next combination in lexicographic order of indices.
      int i = r - 1;
      while (i >= 0 && idx[static_cast<size_t>(i)] == f - r + i) --i;
      if (i < 0) break;
      ++idx[static_cast<size_t>(i)];
      for (int j = i + 1; j < r; ++j) {
        idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
      }
    }
    return true;
  }

  const std::vector<uint64_t>& points_;
  const std::vector<uint64_t>& lows_;
  uint64_t w_;
  int k_;
  const TieBreak& tie_;
  Budget& budget_;
  std::set<std::pair<uint64_t, uint64_t>> enumerated_;  // intervals already enumerated
};

// The antichain of minimal masks after ANDing `lows` with the upward-closed list `l`.
void AndUpwardClosed(std::vector<uint64_t>& lows, const List& l, size_t total_lists,
                     Budget& budget) {
  const auto where = [&] {
    return fmt::format("while intersecting the {} minimal masks of {} with {} minimal masks",
                       l.generators.size(), ListName(l, total_lists), lows.size());
  };
  std::vector<uint64_t> next;
  for (uint64_t g0 : lows) {
    if (!budget.Spend(l.generators.size(), where)) return;
    for (uint64_t g : l.generators) next.push_back(g0 & g);
    if (!budget.Hold(lows.size() + next.size(), where)) return;
  }
  Minimalize(next, budget, where);
  lows.swap(next);
}

// Phase 2 over all lists: nullopt when no candidate exists (or the budget ran out).
std::optional<uint64_t> BestNonPreferred(const std::vector<List>& lists, uint64_t default_mask,
                                         const TieBreak& tie, ReachEngine engine, Budget& budget) {
  int k = 0;
  std::vector<const List*> explicit_lists;
  std::vector<uint64_t> lows = {default_mask};
  uint64_t w = default_mask;
  for (const List& l : lists) {
    k = std::max(k, l.min_count);
    if (!l.upward_closed) {
      // A list offering only "any node" changes nothing.
      if (!(l.family.size() == 1 && l.family[0] == default_mask)) explicit_lists.push_back(&l);
      continue;
    }
    AndUpwardClosed(lows, l, lists.size(), budget);
    if (budget.exhausted()) return std::nullopt;
    w &= l.universe;
  }
  const std::vector<uint64_t> points =
      ReachablePoints(default_mask, explicit_lists, lists.size(), engine, budget);
  if (budget.exhausted()) return std::nullopt;
  return NonPreferredChoice(points, lows, w, k, tie, budget).Choose();
}

// The merge; its result is meaningless once `budget` is exhausted (the caller checks).
MergeResult MergeImpl(const MergeInput& input, ReachEngine engine, Budget& budget) {
  if (input.policy == Policy::kNone) return MergeResult{TopologyHint{std::nullopt, false}, true};
  const uint64_t default_mask = NumaMask::FirstN(input.num_nodes).bits();
  const bool single_numa = input.policy == Policy::kSingleNumaNode;
  const TieBreak tie(
      input.options.prefer_closest_numa_nodes && !single_numa && !input.distances.empty(),
      &input.distances);

  TopologyHint hint{NumaMask(default_mask), false};
  std::optional<std::vector<List>> lists = BuildLists(input, default_mask, single_numa, budget);
  if (lists && !budget.exhausted()) {
    if (std::optional<uint64_t> preferred = BestPreferred(*lists, default_mask, tie)) {
      hint = TopologyHint{NumaMask(*preferred), true};
    } else if (std::optional<uint64_t> m =
                   BestNonPreferred(*lists, default_mask, tie, engine, budget)) {
      hint = TopologyHint{NumaMask(*m), false};
    }
  }
  if (single_numa && hint.affinity && hint.affinity->bits() == default_mask) {
    hint.affinity = std::nullopt;
  }
  return MergeResult{hint, Admits(input.policy, hint.preferred)};
}

absl::StatusOr<MergeResult> MergeCounted(const MergeInput& input, const MergeLimits& limits,
                                         ReachEngine engine, MergeStats* stats) {
  Budget budget(limits, input.num_nodes);
  MergeResult result = MergeImpl(input, engine, budget);
  if (stats != nullptr) *stats = budget.stats();
  if (budget.exhausted()) return budget.status();
  return result;
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

absl::StatusOr<MergeResult> MergeWithin(const MergeInput& input, const MergeLimits& limits) {
  return MergeCounted(input, limits, ReachEngine::kAuto, nullptr);
}

MergeResult Merge(const MergeInput& input) {
  // Nothing can run out of an unlimited budget.
  return *MergeWithin(input, MergeLimits::Unlimited());
}

namespace internal {
MergeResult MergeWithEngineForTest(const MergeInput& input, ReachEngine engine) {
  return *MergeCounted(input, MergeLimits::Unlimited(), engine, nullptr);
}

absl::StatusOr<MergeResult> MergeWithinForTest(const MergeInput& input, const MergeLimits& limits,
                                               ReachEngine engine, MergeStats* stats) {
  return MergeCounted(input, limits, engine, stats);
}
}  // namespace internal

}  // namespace topologyd::hints
