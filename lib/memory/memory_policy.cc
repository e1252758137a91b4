#include "lib/memory/memory_policy.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <set>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/common/status_macros.h"
#include "lib/hints/numa_index.h"
#include "lib/memory/memory_internal.h"

namespace topologyd::memory {
namespace {

using hints::NumaMask;
using Request = std::map<std::string, uint64_t>;

bool IsMemoryType(std::string_view name) {
  return name == kMemory || pod::IsHugePageResourceName(name);
}

// The nodes of the state's tables: masks are over their positions.
hints::NumaIndex NumaOf(const MemoryState& state) {
  std::vector<int> ids;
  for (const auto& [id, node] : state.machine_state) ids.push_back(id);
  return hints::NumaIndex(std::move(ids));
}

const MemoryTable* Table(const MemoryState& state, int id, std::string_view type) {
  auto node = state.machine_state.find(id);
  if (node == state.machine_state.end()) return nullptr;
  auto t = node->second.memory_map.find(type);
  return t == node->second.memory_map.end() ? nullptr : &t->second;
}

uint64_t Reusable(const MemoryState& state, std::string_view pod_uid, const std::vector<int>& ids,
                  const std::string& type) {
  auto pod = state.init_reusable.find(pod_uid);
  if (pod == state.init_reusable.end()) return 0;
  auto mask = pod->second.find(ids);
  if (mask == pod->second.end()) return 0;
  auto t = mask->second.find(type);
  return t == mask->second.end() ? 0 : t->second;
}

bool SameGroup(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// The request and the machine as flat per-position arrays, for the hint walk: no map lookups
// per mask. Types are in the request's (name) order.
struct HintContext {
  hints::NumaIndex numa;
  std::vector<int> positions;  // the enumeration domain, ascending
  int types = 0;
  std::vector<uint64_t> request;      // [t]
  std::vector<uint64_t> allocatable;  // [pos * types + t]
  std::vector<uint64_t> free;         // [pos * types + t]
  uint64_t domain = 0;                // bits of `positions`
  uint64_t assigned = 0;              // nodes holding blocks (number_of_assignments > 0)
  uint64_t multi_cells = 0;           // nodes whose group has more than one entry
  uint64_t multi_unassigned = 0;      // multi_cells nodes without blocks (inconsistent state)
  // The node's group as position bits; 0 when it cannot equal any mask (an id twice, or an id
  // that is not a node), as kubelet's areGroupsEqual would then never match.
  std::vector<uint64_t> group;
  // This pod's reusable init-container memory, by mask; bytes[t].
  std::vector<std::pair<uint64_t, std::vector<uint64_t>>> reusable;
};

// The position bits of `ids` when they are distinct nodes at positions below 64 (in ascending
// order if `ascending`); 0 otherwise.
uint64_t ExactBits(const hints::NumaIndex& numa, const std::vector<int>& ids, bool ascending) {
  uint64_t bits = 0;
  int last = -1;
  for (int id : ids) {
    const int pos = numa.Position(id);
    if (pos < 0 || pos >= NumaMask::kMaxNodes) return 0;
    if (ascending && pos <= last) return 0;
    last = pos;
    const uint64_t bit = uint64_t{1} << pos;
    if ((bits & bit) != 0) return 0;
    bits |= bit;
  }
  return bits;
}

HintContext MakeHintContext(const MemoryState& state, std::string_view pod_uid,
                            const Request& request) {
  HintContext c;
  c.numa = NumaOf(state);
  const int n = c.numa.size();
  const int usable = std::min(n, NumaMask::kMaxNodes);
  c.types = static_cast<int>(request.size());
  for (const auto& [type, bytes] : request) c.request.push_back(bytes);
  const size_t t_count = static_cast<size_t>(c.types);
  c.allocatable.assign(static_cast<size_t>(usable) * t_count, 0);
  c.free.assign(static_cast<size_t>(usable) * t_count, 0);
  c.group.assign(static_cast<size_t>(usable), 0);
  int pos = 0;
  for (const auto& [id, node] : state.machine_state) {
    if (pos >= usable) break;
    const uint64_t bit = uint64_t{1} << pos;
    bool has_memory = false;
    size_t t = 0;
    for (const auto& [type, bytes] : request) {
      auto table = node.memory_map.find(type);
      if (table != node.memory_map.end()) {
        c.allocatable[static_cast<size_t>(pos) * t_count + t] = table->second.allocatable;
        c.free[static_cast<size_t>(pos) * t_count + t] = table->second.free;
        has_memory |= table->second.allocatable > 0;
      }
      ++t;
    }
    // Up to kMaxExactNumaNodes every node, as kubelet; above, only nodes with memory of a
    // requested type (see memory_policy.h).
    if (n <= kMaxExactNumaNodes || has_memory) {
      c.positions.push_back(pos);
      c.domain |= bit;
    }
    if (node.number_of_assignments > 0) c.assigned |= bit;
    if (node.cells.size() > 1) {
      c.multi_cells |= bit;
      if (node.number_of_assignments == 0) c.multi_unassigned |= bit;
    }
    c.group[static_cast<size_t>(pos)] = ExactBits(c.numa, node.cells, /*ascending=*/false);
    ++pos;
  }
  auto pod = state.init_reusable.find(pod_uid);
  if (pod != state.init_reusable.end()) {
    for (const auto& [ids, bytes] : pod->second) {
      // Reusable() looks the mask's ascending ids up exactly.
      const uint64_t bits = ExactBits(c.numa, ids, /*ascending=*/true);
      if (bits == 0) continue;
      std::vector<uint64_t> per_type;
      bool any = false;
      for (const auto& [type, unused] : request) {
        auto it = bytes.find(type);
        per_type.push_back(it == bytes.end() ? 0 : it->second);
        any |= per_type.back() > 0;
      }
      if (any) c.reusable.emplace_back(bits, std::move(per_type));
    }
  }
  return c;
}

// kubelet's group rules (calculateHints): a single node must not be in a multi-NUMA group; in a
// multi-node mask every node holding blocks must belong to exactly this group.
bool GroupsAllow(const HintContext& c, uint64_t bits) {
  if ((bits & (bits - 1)) == 0) return (bits & c.multi_cells) == 0;
  for (uint64_t used = bits & c.assigned; used != 0; used &= used - 1) {
    const int pos = std::countr_zero(used);
    if ((c.multi_cells >> pos & 1U) == 0) return false;
    if (c.group[static_cast<size_t>(pos)] != bits) return false;
  }
  return true;
}

bool Covers(const HintContext& c, const uint64_t* sum) {
  for (size_t t = 0; t < static_cast<size_t>(c.types); ++t) {
    if (sum[t] < c.request[t]) return false;
  }
  return true;
}

bool FreeFits(const HintContext& c, uint64_t bits, const uint64_t* free_sum) {
  if (c.reusable.empty()) return Covers(c, free_sum);
  const std::vector<uint64_t>* reusable = nullptr;
  for (const auto& [mask, bytes] : c.reusable) {
    if (mask == bits) reusable = &bytes;
  }
  for (size_t t = 0; t < static_cast<size_t>(c.types); ++t) {
    const uint64_t extra = reusable == nullptr ? 0 : (*reusable)[t];
    if (free_sum[t] + extra < c.request[t]) return false;
  }
  return true;
}

// The sums of `values` ([pos * types + t]) over `bits`, into `out`.
void SumOver(const HintContext& c, const std::vector<uint64_t>& values, uint64_t bits,
             uint64_t* out) {
  const size_t t_count = static_cast<size_t>(c.types);
  std::fill(out, out + t_count, 0);
  for (; bits != 0; bits &= bits - 1) {
    const size_t pos = static_cast<size_t>(std::countr_zero(bits));
    for (size_t t = 0; t < t_count; ++t) out[t] += values[pos * t_count + t];
  }
}

// C(n, k) for n <= 64 (C(64, 32) < 2^63).
int64_t Binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  k = std::min(k, n - k);
  int64_t r = 1;
  for (int i = 1; i <= k; ++i) r = r / i * (n - k + i) + r % i * (n - k + i) / i;
  return r;
}

// Every valid mask of `c` in kubelet's order (by size, then lexicographic), as hints, stopping
// after `budget` visited masks. A mask is preferred iff its size is the narrowest that holds the
// request in allocatable bytes; masks are visited by size, so that size is known at the first
// valid mask.
//
// A multi-node combination whose first nodes already include a node holding blocks outside a
// group containing them all cannot be valid whatever follows, so once the preferred size is
// known such a run of combinations is skipped whole (and counted against the budget as if
// visited).
std::vector<hints::TopologyHint> ExplicitHints(const HintContext& c, int64_t budget) {
  const int n = static_cast<int>(c.positions.size());
  const size_t t_count = static_cast<size_t>(c.types);
  int min_size = c.numa.size();
  std::vector<hints::TopologyHint> out;
  // Per level k (the first k nodes of the combination): node bits, the nodes every used node
  // among them allows beside it, and the allocatable and free sums.
  const size_t levels = static_cast<size_t>(n) + 1;
  std::vector<uint64_t> bits_prefix(levels, 0);
  std::vector<uint64_t> allowed_prefix(levels, ~uint64_t{0});
  std::vector<uint64_t> alloc_prefix(levels * t_count, 0);
  std::vector<uint64_t> free_prefix(levels * t_count, 0);
  std::vector<int> idx;
  for (int size = 1; size <= n; ++size) {
    idx.resize(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) idx[static_cast<size_t>(i)] = i;
    int from = 0;
    while (true) {
      int advance_at = size - 1;
      bool skipped = false;
      for (int k = from; k < size; ++k) {
        const size_t lvl = static_cast<size_t>(k);
        const size_t pos = static_cast<size_t>(c.positions[static_cast<size_t>(idx[lvl])]);
        const uint64_t bit = uint64_t{1} << pos;
        bits_prefix[lvl + 1] = bits_prefix[lvl] | bit;
        uint64_t allowed = allowed_prefix[lvl];
        if ((c.assigned & bit) != 0) allowed &= (c.multi_cells & bit) != 0 ? c.group[pos] : 0;
        allowed_prefix[lvl + 1] = allowed;
        for (size_t t = 0; t < t_count; ++t) {
          alloc_prefix[(lvl + 1) * t_count + t] =
              alloc_prefix[lvl * t_count + t] + c.allocatable[pos * t_count + t];
          free_prefix[(lvl + 1) * t_count + t] =
              free_prefix[lvl * t_count + t] + c.free[pos * t_count + t];
        }
        if (size >= 2 && min_size <= size && (bits_prefix[lvl + 1] & ~allowed) != 0) {
          // Every combination extending idx[0..k] is refused by the group rules.
          const int64_t run = Binomial(n - 1 - idx[lvl], size - 1 - k);
          if (budget < run) return out;
          budget -= run;
          advance_at = k;
          skipped = true;
          break;
        }
      }
      if (!skipped) {
        if (--budget < 0) return out;
        const size_t top = static_cast<size_t>(size);
        const uint64_t bits = bits_prefix[top];
        if (Covers(c, &alloc_prefix[top * t_count])) {
          min_size = std::min(min_size, size);
          if (GroupsAllow(c, bits) && FreeFits(c, bits, &free_prefix[top * t_count])) {
            out.push_back(
                hints::TopologyHint{.affinity = NumaMask(bits), .preferred = size == min_size});
          }
        }
      }
      int i = advance_at;
      while (i >= 0 && idx[static_cast<size_t>(i)] == n - size + i) --i;
      if (i < 0) break;
      ++idx[static_cast<size_t>(i)];
      for (int j = i + 1; j < size; ++j) {
        idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
      }
      from = i;
    }
  }
  return out;
}

// Depth-first walk over subsets of `nodes` (ascending positions) in lexicographic order that
// does not extend a subset once it covers `need` (sums of `values`) or can no longer reach it.
// `on_cover(bits, sums)` is called for each covering subset. Returns false when more than
// `budget` subsets were visited.
template <typename OnCover>
bool CoverWalk(const HintContext& c, const std::vector<int>& nodes,
               const std::vector<const std::vector<uint64_t>*>& values, int max_size,
               int64_t budget, OnCover on_cover) {
  const size_t m = nodes.size();
  const size_t w = values.size() * static_cast<size_t>(c.types);  // sums per subset
  const size_t t_count = static_cast<size_t>(c.types);
  auto value = [&](size_t node, size_t k) {
    const size_t pos = static_cast<size_t>(nodes[node]);
    return (*values[k / t_count])[pos * t_count + k % t_count];
  };
  auto need = [&](size_t k) { return c.request[k % t_count]; };
  // suffix[i * w + k]: the sums over nodes[i..m).
  std::vector<uint64_t> suffix((m + 1) * w, 0);
  for (size_t i = m; i-- > 0;) {
    for (size_t k = 0; k < w; ++k) suffix[i * w + k] = suffix[(i + 1) * w + k] + value(i, k);
  }
  std::vector<uint64_t> sums((m + 1) * w, 0);  // per depth
  std::vector<size_t> next(m + 1, 0);          // per depth: the next candidate index
  std::vector<uint64_t> bits(m + 1, 0);
  size_t depth = 0;
  next[0] = 0;
  while (true) {
    if (next[depth] >= m || static_cast<int>(depth) >= max_size) {
      if (depth == 0) return true;
      --depth;
      continue;
    }
    const size_t i = next[depth]++;
    if (--budget < 0) return false;
    uint64_t* s = &sums[(depth + 1) * w];
    bool covers = true;
    bool reachable = true;
    for (size_t k = 0; k < w; ++k) {
      s[k] = sums[depth * w + k] + value(i, k);
      covers &= s[k] >= need(k);
      reachable &= s[k] + suffix[(i + 1) * w + k] >= need(k);
    }
    const uint64_t b = bits[depth] | uint64_t{1} << nodes[i];
    if (covers) {
      on_cover(b, s);
      continue;
    }
    if (!reachable || i + 1 >= m) continue;
    bits[depth + 1] = b;
    next[depth + 1] = i + 1;
    ++depth;
  }
}

struct UpwardClosedHints {
  uint64_t universe = 0;
  std::vector<uint64_t> generators;  // the inclusion-minimal valid masks
  int min_size = 0;
};

// The valid masks as an upward-closed family when they are one: every node of the domain that
// holds blocks is left out of the universe, and no mask touching such a node (nor one that fits
// only thanks to reusable init-container memory) may be valid. nullopt otherwise, or when a
// walk exceeds `budget`.
std::optional<UpwardClosedHints> UpwardClosed(const HintContext& c, int64_t budget) {
  if ((c.multi_unassigned & c.domain) != 0) return std::nullopt;
  const size_t t_count = static_cast<size_t>(c.types);
  std::vector<uint64_t> alloc_sum(t_count), free_sum(t_count);
  auto valid = [&](uint64_t bits) {
    SumOver(c, c.allocatable, bits, alloc_sum.data());
    SumOver(c, c.free, bits, free_sum.data());
    return Covers(c, alloc_sum.data()) && GroupsAllow(c, bits) &&
           FreeFits(c, bits, free_sum.data());
  };
  const uint64_t used = c.domain & c.assigned;
  for (uint64_t rest = used; rest != 0; rest &= rest - 1) {
    const int pos = std::countr_zero(rest);
    if (valid(uint64_t{1} << pos)) return std::nullopt;
    const uint64_t group = c.group[static_cast<size_t>(pos)];
    if ((group & (group - 1)) != 0 && (group & ~c.domain) == 0 && valid(group)) {
      return std::nullopt;
    }
  }
  UpwardClosedHints out;
  out.universe = c.domain & ~used;
  for (const auto& [mask, bytes] : c.reusable) {
    if ((mask & ~c.domain) != 0 || !valid(mask)) continue;
    if ((mask & used) != 0) return std::nullopt;
    SumOver(c, c.allocatable, mask, alloc_sum.data());
    SumOver(c, c.free, mask, free_sum.data());
    if (!Covers(c, free_sum.data())) return std::nullopt;  // valid only thanks to reuse
  }

  // Minimal masks of {M within the universe : allocatable and free cover the request}.
  std::vector<int> nodes;
  for (uint64_t b = out.universe; b != 0; b &= b - 1) nodes.push_back(std::countr_zero(b));
  const std::vector<const std::vector<uint64_t>*> both = {&c.allocatable, &c.free};
  // A covering mask is minimal iff removing any node breaks the cover (the walk never reports
  // supersets of a covering mask it reached first); a single node always is, since a hint is
  // never empty (even for a zero request).
  const size_t w = 2 * t_count;
  auto is_minimal = [&](uint64_t bits, const uint64_t* sums) {
    if ((bits & (bits - 1)) == 0) return true;
    for (uint64_t b = bits; b != 0; b &= b - 1) {
      const size_t pos = static_cast<size_t>(std::countr_zero(b));
      bool covers = true;
      for (size_t k = 0; k < w; ++k) {
        covers &=
            sums[k] - (*both[k / t_count])[pos * t_count + k % t_count] >= c.request[k % t_count];
      }
      if (covers) return false;
    }
    return true;
  };
  const bool walked = CoverWalk(c, nodes, both, static_cast<int>(nodes.size()), budget,
                                [&](uint64_t bits, const uint64_t* sums) {
                                  if (is_minimal(bits, sums)) out.generators.push_back(bits);
                                });
  if (!walked) return std::nullopt;

  // The preferred size: the narrowest mask of the whole domain holding the request in
  // allocatable bytes (at most the narrowest generator).
  int best = c.numa.size();
  for (uint64_t g : out.generators) best = std::min(best, std::popcount(g));
  if (out.generators.empty()) return out;
  std::vector<int> domain_nodes(c.positions.begin(), c.positions.end());
  const std::vector<const std::vector<uint64_t>*> alloc_only = {&c.allocatable};
  while (best > 1) {
    bool smaller = false;
    if (!CoverWalk(c, domain_nodes, alloc_only, best - 1, budget,
                   [&](uint64_t, const uint64_t*) { smaller = true; })) {
      return std::nullopt;
    }
    if (!smaller) break;
    --best;
  }
  out.min_size = best;
  std::sort(out.generators.begin(), out.generators.end(),
            [](uint64_t a, uint64_t b) { return NumaMask(a).IsNarrowerThan(NumaMask(b)); });
  return out;
}

// The same list for every requested type. An empty list (nothing fits) is kept: it says the
// request cannot be satisfied, which the merge turns into a non-preferred "any node" hint, so
// restricted and single-numa-node refuse the pod there (kubelet's "no fit" rule).
std::map<std::string, hints::HintList> ForEveryType(const Request& request,
                                                    const hints::ResourceHints& list) {
  std::map<std::string, hints::HintList> out;
  for (const auto& [type, bytes] : request) out[type] = list;
  return out;
}

}  // namespace

namespace internal {

std::map<std::string, hints::HintList> CalculateHints(const MemoryState& state,
                                                      std::string_view pod_uid,
                                                      const Request& request,
                                                      int max_explicit_nodes) {
  const HintContext c = MakeHintContext(state, pod_uid, request);
  const int domain = static_cast<int>(c.positions.size());
  if (domain > max_explicit_nodes) {
    if (std::optional<UpwardClosedHints> uc = UpwardClosed(c, kMaxMaskBudget)) {
      if (uc->generators.empty()) return ForEveryType(request, hints::ResourceHints{});
      hints::ResourceHints list{
          .hints = {}, .upward_closed = true, .universe = NumaMask(uc->universe)};
      for (uint64_t g : uc->generators) {
        list.hints.push_back(hints::TopologyHint{.affinity = NumaMask(g),
                                                 .preferred = std::popcount(g) == uc->min_size});
      }
      return ForEveryType(request, list);
    }
  }
  const int64_t budget = domain <= kMaxExactNumaNodes ? INT64_MAX : kMaxMaskBudget;
  hints::ResourceHints list;
  // A walk cut by its budget (above 16 nodes) before any fit answers "cannot fit" too: Allocate
  // reads the same walk, so the pod could not be placed anyway.
  list.hints = ExplicitHints(c, budget);
  if (domain > hints::kMaxDenseMergeNodes && list.hints.size() > kMaxHintsWithoutDenseMerge) {
    list.hints.resize(kMaxHintsWithoutDenseMerge);  // the narrowest, in kubelet's order
  }
  return ForEveryType(request, list);
}

}  // namespace internal

namespace {

// kubelet's calculateHints, in the form of memory_policy.h.
std::map<std::string, hints::HintList> CalculateHints(const MemoryState& state,
                                                      std::string_view pod_uid,
                                                      const Request& request) {
  return internal::CalculateHints(state, pod_uid, request, kMaxExplicitNumaNodes);
}

// kubelet's calculateHints as an explicit list (Allocate's own choice of a default or extended
// hint reads the list kubelet would hold).
std::map<std::string, hints::HintList> CalculateExplicitHints(const MemoryState& state,
                                                              std::string_view pod_uid,
                                                              const Request& request) {
  return internal::CalculateHints(state, pod_uid, request, NumaMask::kMaxNodes);
}

// kubelet's regenerateHints; nullopt when the stored blocks do not match the request.
hints::ProviderHints RegenerateHints(const MemoryState& state, const std::vector<Block>& blocks,
                                     const Request& request) {
  if (blocks.size() != request.size()) return std::nullopt;
  const hints::NumaIndex numa = NumaOf(state);
  std::map<std::string, hints::HintList> out;
  for (const auto& [type, bytes] : request) out[type] = hints::ResourceHints{};
  for (const Block& b : blocks) {
    auto it = request.find(b.type);
    if (it == request.end() || it->second != b.size) return std::nullopt;
    out[b.type]->hints.push_back(
        hints::TopologyHint{.affinity = numa.Mask(b.numa_affinity), .preferred = true});
  }
  return out;
}

const std::vector<Block>* Blocks(const MemoryState& state, std::string_view pod_uid,
                                 std::string_view container) {
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return nullptr;
  auto c = pod->second.find(container);
  return c == pod->second.end() ? nullptr : &c->second;
}

// kubelet's findBestHint: preferred first, then narrower.
std::optional<hints::TopologyHint> FindBestHint(const std::vector<hints::TopologyHint>& list) {
  std::optional<hints::TopologyHint> best;
  for (const hints::TopologyHint& h : list) {
    if (!best) {
      best = h;
      continue;
    }
    if (h.preferred && !best->preferred) {
      best = h;
      continue;
    }
    if (h.preferred == best->preferred && h.affinity->IsNarrowerThan(*best->affinity)) best = h;
  }
  return best;
}

bool SatisfiesRequest(const MemoryState& state, const std::vector<int>& ids,
                      const Request& request) {
  for (const auto& [type, bytes] : request) {
    uint64_t free = 0;
    for (int id : ids) {
      if (const MemoryTable* t = Table(state, id, type)) free += t->free;
    }
    if (free < bytes) return false;
  }
  return true;
}

// The group rules of hint step 2, which allocation step 3 checks again on the final mask (both
// in docs/admission.md, "Memory and hugepages"): a single node must not belong to a multi-NUMA
// group; in a multi-node mask every used node must belong to exactly this group. (kubelet's Go
// code skips the check for single-node masks and then overwrites the node's group, leaving a
// machine state its own start-up check can refuse.)
bool ViolatesGroups(const MemoryState& state, const std::vector<int>& ids) {
  if (ids.size() == 1) {
    auto node = state.machine_state.find(ids.front());
    return node != state.machine_state.end() && node->second.cells.size() > 1;
  }
  for (int id : ids) {
    auto node = state.machine_state.find(id);
    if (node == state.machine_state.end() || node->second.number_of_assignments == 0) continue;
    if (node->second.cells.size() == 1) return true;
    if (!SameGroup(node->second.cells, ids)) return true;
  }
  return false;
}

void UpdatePodReusableMemory(MemoryState& state, const pod::Pod& pod, pod::ContainerRole role,
                             const std::vector<Block>& blocks) {
  for (auto it = state.init_reusable.begin(); it != state.init_reusable.end();) {
    it = it->first == pod.uid ? std::next(it) : state.init_reusable.erase(it);
  }
  if (role == pod::ContainerRole::kInit) {
    auto& reusable = state.init_reusable[pod.uid];
    for (const Block& b : blocks) {
      uint64_t& cur = reusable[b.numa_affinity][b.type];
      if (b.size > cur) cur = b.size;
    }
    return;
  }
  auto pod_it = state.init_reusable.find(pod.uid);
  if (pod_it == state.init_reusable.end()) return;
  for (const Block& b : blocks) {
    auto mask = pod_it->second.find(b.numa_affinity);
    if (mask == pod_it->second.end()) continue;
    auto t = mask->second.find(b.type);
    if (t == mask->second.end() || t->second == 0) continue;
    t->second = b.size >= t->second ? 0 : t->second - b.size;
  }
}

// kubelet's updateInitContainersMemoryBlocks: app containers that reused an init container's
// memory shrink that init container's blocks, so the blocks of a pod sum to what it holds.
// It walks the pod's init containers for every block of every container: with the memory
// manager on, a pod's admission costs its init containers times its containers.
void UpdateInitContainersMemoryBlocks(MemoryState& state, const pod::Pod& pod,
                                      const pod::Container& container,
                                      const std::vector<Block>& container_blocks) {
  auto pod_it = state.assignments.find(pod.uid);
  if (pod_it == state.assignments.end()) return;
  for (const Block& cb : container_blocks) {
    uint64_t size = cb.size;
    for (const pod::Container& init : pod.init_containers) {
      if (&init == &container) break;
      if (size == 0) break;
      if (init.restart_always) continue;
      auto c = pod_it->second.find(init.name);
      if (c == pod_it->second.end() || c->second.empty()) continue;
      for (Block& ib : c->second) {
        if (ib.size == 0 || ib.type != cb.type || ib.numa_affinity != cb.numa_affinity) continue;
        if (ib.size > size) {
          ib.size -= size;
          size = 0;
        } else {
          size -= ib.size;
          ib.size = 0;
        }
      }
    }
  }
}

absl::Status Rejection(std::string_view message) {
  return absl::FailedPreconditionError(std::string(message));
}

}  // namespace

absl::StatusOr<Request> ContainerMemoryRequest(const pod::Container& c) {
  Request out;
  for (const auto& [name, q] : c.requests) {
    if (!IsMemoryType(name)) continue;
    const std::optional<int64_t> bytes = q.AsInt64();
    if (!bytes || *bytes < 0) {
      return absl::InvalidArgumentError("[memorymanager] failed to represent quantity as int64");
    }
    out[name] = static_cast<uint64_t>(*bytes);
  }
  return out;
}

absl::StatusOr<Request> PodMemoryRequest(const pod::Pod& pod) {
  Request init_max, sidecars;
  for (const pod::Container& c : pod.init_containers) {
    TOPOLOGYD_ASSIGN_OR_RETURN(Request r, ContainerMemoryRequest(c));
    for (const auto& [type, bytes] : r) {
      init_max.try_emplace(type, 0);
      if (c.restart_always) {
        sidecars[type] += bytes;
      } else if (sidecars[type] + bytes > init_max[type]) {
        init_max[type] = sidecars[type] + bytes;
      }
    }
  }
  Request apps;
  for (const pod::Container& c : pod.containers) {
    TOPOLOGYD_ASSIGN_OR_RETURN(Request r, ContainerMemoryRequest(c));
    for (const auto& [type, bytes] : r) apps[type] += bytes;
  }
  // Every type any container requests, as kubelet's rule says (its Go code loops over the app
  // containers' types only, so a type only init containers ask for got no NUMA placement).
  Request out;
  for (const Request* types : {&apps, &init_max, &sidecars}) {
    for (const auto& entry : *types) {
      const std::string& type = entry.first;
      const auto get = [&type](const Request& r) { return r.contains(type) ? r.at(type) : 0; };
      out[type] = std::max(get(apps) + get(sidecars), get(init_max));
    }
  }
  return out;
}

namespace {

absl::StatusOr<pod::OrderedContainer> Find(const pod::Pod& pod, std::string_view name) {
  const pod::Container* container = pod::FindContainer(pod, name);
  if (container == nullptr) {
    return absl::NotFoundError(fmt::format("pod \"{}\" has no container \"{}\"", pod.uid, name));
  }
  const pod::ContainerRole role = pod::IsRegularInitContainer(pod, name) ? pod::ContainerRole::kInit
                                  : pod::IsSidecarContainer(pod, name)
                                      ? pod::ContainerRole::kSidecar
                                      : pod::ContainerRole::kApp;
  return pod::OrderedContainer{container, role};
}

bool IsGuaranteed(const pod::Pod& pod) {
  return pod::ComputeQos(pod) == pod::QosClass::kGuaranteed;
}

}  // namespace

absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const MemoryState& state,
                                                               const pod::Pod& pod,
                                                               std::string_view container_name) {
  TOPOLOGYD_ASSIGN_OR_RETURN(const pod::OrderedContainer c, Find(pod, container_name));
  return GetContainerTopologyHints(state, pod, c, IsGuaranteed(pod));
}

absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const MemoryState& state,
                                                               const pod::Pod& pod,
                                                               const pod::OrderedContainer& c,
                                                               bool guaranteed) {
  const std::string_view container_name = c.spec->name;
  if (!guaranteed) return hints::ProviderHints();
  absl::StatusOr<Request> request = ContainerMemoryRequest(*c.spec);
  if (!request.ok()) return hints::ProviderHints();  // kubelet logs and offers no hints
  if (const std::vector<Block>* blocks = Blocks(state, pod.uid, container_name)) {
    return RegenerateHints(state, *blocks, *request);
  }
  return hints::ProviderHints(CalculateHints(state, pod.uid, *request));
}

absl::StatusOr<hints::ProviderHints> GetPodTopologyHints(const MemoryState& state,
                                                         const pod::Pod& pod) {
  if (pod::ComputeQos(pod) != pod::QosClass::kGuaranteed) return hints::ProviderHints();
  absl::StatusOr<Request> request = PodMemoryRequest(pod);
  if (!request.ok()) return hints::ProviderHints();
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const pod::Container& c : *list) {
      if (const std::vector<Block>* blocks = Blocks(state, pod.uid, c.name)) {
        return RegenerateHints(state, *blocks, *request);
      }
    }
  }
  return hints::ProviderHints(CalculateHints(state, pod.uid, *request));
}

absl::StatusOr<MemoryState> Allocate(MemoryState state, const pod::Pod& pod,
                                     std::string_view container_name,
                                     const hints::TopologyHint& affinity) {
  TOPOLOGYD_ASSIGN_OR_RETURN(const pod::OrderedContainer c, Find(pod, container_name));
  return Allocate(std::move(state), pod, c, IsGuaranteed(pod), affinity);
}

absl::StatusOr<MemoryState> Allocate(MemoryState state, const pod::Pod& pod,
                                     const pod::OrderedContainer& c, bool guaranteed,
                                     const hints::TopologyHint& affinity) {
  const std::string_view container_name = c.spec->name;
  if (!guaranteed) return state;
  MemoryState& next = state;
  if (const std::vector<Block>* blocks = Blocks(state, pod.uid, container_name)) {
    UpdatePodReusableMemory(next, pod, c.role, *blocks);  // changes init_reusable only
    return state;
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(const Request request, ContainerMemoryRequest(*c.spec));
  const hints::NumaIndex numa = NumaOf(state);

  hints::TopologyHint best = affinity;
  if (!best.affinity) {
    const auto all = CalculateExplicitHints(state, pod.uid, request);
    auto mem = all.find(std::string(kMemory));
    if (all.empty() || mem == all.end() || !mem->second || mem->second->hints.empty()) {
      return Rejection(
          "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
          "memory is available");
    }
    const hints::TopologyHint def = *FindBestHint(mem->second->hints);
    if (!def.preferred && affinity.preferred) {
      return Rejection("[memorymanager] failed to find the default preferred hint");
    }
    best = def;
  }
  if (!SatisfiesRequest(state, numa.Ids(*best.affinity), request)) {
    const auto all = CalculateExplicitHints(state, pod.uid, request);
    std::vector<hints::TopologyHint> containing;
    auto mem = all.find(std::string(kMemory));
    if (mem != all.end() && mem->second) {
      for (const hints::TopologyHint& h : mem->second->hints) {
        if ((h.affinity->bits() & best.affinity->bits()) == best.affinity->bits()) {
          containing.push_back(h);
        }
      }
    }
    if (containing.empty()) {
      return Rejection(
          "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
    }
    const hints::TopologyHint extended = *FindBestHint(containing);
    if (!extended.preferred && best.preferred) {
      return Rejection("[memorymanager] failed to find the extended preferred hint");
    }
    best = extended;
  }
  const std::vector<int> ids = numa.Ids(*best.affinity);
  if (ids.empty() || ViolatesGroups(state, ids)) {
    return Rejection("[memorymanager] preferred hint violates NUMA node allocation");
  }

  std::vector<Block> blocks;
  for (const auto& [type, bytes] : request) {
    blocks.push_back(Block{.numa_affinity = ids, .type = type, .size = bytes});
    const uint64_t reusable = Reusable(next, pod.uid, ids, type);
    internal::TakeBlock(next, ids, type, reusable >= bytes ? 0 : bytes - reusable);
  }
  UpdatePodReusableMemory(next, pod, c.role, blocks);
  next.assignments[pod.uid][std::string(container_name)] = blocks;
  UpdateInitContainersMemoryBlocks(next, pod, *c.spec, blocks);
  return state;
}

absl::StatusOr<MemoryState> PinBlock(MemoryState state, std::string_view pod_uid,
                                     std::string_view container_name,
                                     const std::vector<int>& numa_ids, std::string_view type,
                                     uint64_t size) {
  uint64_t free = 0;
  for (int id : numa_ids) {
    auto node = state.machine_state.find(id);
    if (node == state.machine_state.end()) continue;
    if (auto t = node->second.memory_map.find(type); t != node->second.memory_map.end()) {
      free += t->second.free;
    }
  }
  if (free < size) {
    return absl::FailedPreconditionError(
        fmt::format("{} bytes of {} wanted on NUMA nodes [{}], {} free", size, type,
                    fmt::join(numa_ids, ","), free));
  }
  internal::TakeBlock(state, numa_ids, type, size);
  state.assignments[std::string(pod_uid)][std::string(container_name)].push_back(
      Block{.numa_affinity = numa_ids, .type = std::string(type), .size = size});
  return state;
}

MemoryState RemoveContainer(MemoryState state, std::string_view pod_uid,
                            std::string_view container_name) {
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return state;
  auto c = pod->second.find(container_name);
  if (c == pod->second.end()) return state;
  const std::vector<Block> blocks = std::move(c->second);
  pod->second.erase(c);
  if (pod->second.empty()) state.assignments.erase(pod);
  for (const Block& b : blocks) {
    uint64_t released = b.size;
    for (int id : b.numa_affinity) {
      auto node = state.machine_state.find(id);
      if (node == state.machine_state.end()) continue;
      NumaNodeState& ns = node->second;
      ns.number_of_assignments--;
      if (ns.number_of_assignments == 0) ns.cells = {id};
      if (released == 0) continue;
      auto t = ns.memory_map.find(b.type);
      if (t == ns.memory_map.end() || t->second.reserved == 0) continue;
      const uint64_t give = std::min(t->second.reserved, released);
      t->second.reserved -= give;
      t->second.free += give;
      released -= give;
    }
  }
  return state;
}

MemoryState RemovePod(MemoryState state, std::string_view pod_uid) {
  state.init_reusable.erase(std::string(pod_uid));
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return state;
  std::vector<std::string> names;
  for (const auto& [name, blocks] : pod->second) names.push_back(name);
  for (const std::string& name : names) state = RemoveContainer(std::move(state), pod_uid, name);
  return state;
}

std::map<int, std::map<std::string, uint64_t>> ContainerMemoryByNode(
    const MemoryState& state, std::string_view pod_uid, std::string_view container_name) {
  std::map<int, std::map<std::string, uint64_t>> out;
  const std::vector<Block>* blocks = Blocks(state, pod_uid, container_name);
  if (blocks == nullptr) return out;
  for (const Block& b : *blocks) {
    uint64_t left = b.size;
    for (size_t i = 0; i < b.numa_affinity.size(); ++i) {
      const int id = b.numa_affinity[i];
      uint64_t room = left;
      if (i + 1 < b.numa_affinity.size()) {
        const MemoryTable* table = Table(state, id, b.type);
        room = std::min(left, table == nullptr ? 0 : table->allocatable);
      }
      out[id][b.type] += room;
      left -= room;
    }
  }
  return out;
}

}  // namespace topologyd::memory
