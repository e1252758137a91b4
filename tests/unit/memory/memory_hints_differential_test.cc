// Randomized comparison of lib/memory's hint generation with the straightforward transcription
// of kubelet's calculateHints (reference_hints.h) on random machine states: random tables,
// blocks, multi-NUMA groups (also inconsistent ones), reusable init-container memory and sparse
// node ids.
//   * The explicit form must be the reference list, element for element (kubelet's order).
//   * The upward-closed form, when chosen, must Expand() to the same set of masks with the
//     same preferred flags (its order is by size, then value; the merge does not depend on
//     the order of a list).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "lib/hints/expand.h"
#include "lib/memory/memory_internal.h"
#include "lib/memory/memory_policy.h"
#include "tests/unit/memory/reference_hints.h"

namespace topologyd::memory {
namespace {

using Hints = std::map<std::string, hints::HintList>;

constexpr uint64_t kUnit = uint64_t{1} << 28;  // 256 MiB
const char* const kTypes[] = {"memory", "hugepages-2Mi", "hugepages-1Gi"};

struct Case {
  MemoryState state;
  std::map<std::string, uint64_t> request;
};

Case RandomCase(std::mt19937_64& rng, int n) {
  auto pick = [&](uint64_t k) { return rng() % k; };
  Case c;
  std::vector<int> ids;
  int id = static_cast<int>(pick(3));
  for (int i = 0; i < n; ++i) {
    ids.push_back(id);
    id += 1 + (pick(4) == 0 ? static_cast<int>(pick(5)) : 0);
  }
  for (int node_id : ids) {
    NumaNodeState ns;
    ns.cells = {node_id};
    for (const char* type : kTypes) {
      if (std::string(type) != "memory" && pick(3) == 0) continue;
      MemoryTable t;
      t.allocatable = pick(5) == 0 ? 0 : pick(9) * kUnit;
      t.total = t.allocatable + kUnit;
      t.free = pick(3) == 0 ? t.allocatable : (t.allocatable == 0 ? 0 : pick(t.allocatable + 1));
      if (pick(40) == 0) t.free = t.allocatable + kUnit;  // an inconsistent table
      t.reserved = t.allocatable >= t.free ? t.allocatable - t.free : 0;
      ns.memory_map[type] = t;
    }
    c.state.machine_state[node_id] = ns;
  }
  // Blocks: single-NUMA ones and multi-NUMA groups.
  const int blocks = static_cast<int>(pick(4));
  for (int b = 0; b < blocks; ++b) {
    std::vector<int> group;
    for (int node_id : ids) {
      if (pick(static_cast<uint64_t>(n)) < 2) group.push_back(node_id);
    }
    if (group.empty()) group.push_back(ids[pick(ids.size())]);
    for (int node_id : group) {
      NumaNodeState& ns = c.state.machine_state.at(node_id);
      ns.number_of_assignments += 1 + static_cast<int>(pick(2));
      ns.cells = group;
    }
  }
  // Rare inconsistencies: a group on a node without blocks, odd cells.
  if (pick(10) == 0) {
    NumaNodeState& ns = c.state.machine_state.at(ids[pick(ids.size())]);
    switch (pick(4)) {
      case 0:
        ns.cells = {ids.front(), ids.back()};
        break;
      case 1:
        ns.cells = {ids.front(), ids.front()};
        break;
      case 2:
        ns.cells = {};
        break;
      default:
        ns.cells.push_back(1000);
    }
  }
  // This pod's reusable init-container memory.
  const int reusable = pick(3) == 0 ? static_cast<int>(pick(4)) : 0;
  for (int r = 0; r < reusable; ++r) {
    std::vector<int> mask;
    for (int node_id : ids) {
      if (pick(static_cast<uint64_t>(n)) < 2) mask.push_back(node_id);
    }
    if (mask.empty()) mask.push_back(ids[pick(ids.size())]);
    if (pick(10) == 0) std::reverse(mask.begin(), mask.end());
    for (const char* type : kTypes) {
      if (pick(2) == 0) c.state.init_reusable["pod"][mask][type] = pick(6) * kUnit;
    }
  }
  if (pick(10) == 0) c.state.init_reusable["other"][{ids[0]}]["memory"] = 8 * kUnit;
  for (const char* type : kTypes) {
    if (std::string(type) == "memory" || pick(2) == 0) {
      c.request[type] = pick(8) == 0 ? 0 : (1 + pick(static_cast<uint64_t>(2 * n))) * kUnit;
    }
  }
  return c;
}

struct Entry {
  uint64_t bits;
  bool preferred;
  friend bool operator==(const Entry&, const Entry&) = default;
  friend bool operator<(const Entry& a, const Entry& b) {
    return a.bits != b.bits ? a.bits < b.bits : a.preferred < b.preferred;
  }
};

std::vector<Entry> AsSet(const std::vector<hints::TopologyHint>& list) {
  std::vector<Entry> out;
  for (const hints::TopologyHint& h : list) out.push_back({h.affinity->bits(), h.preferred});
  std::sort(out.begin(), out.end());
  return out;
}

// Compares one generated answer with the reference; counts the upward-closed answers.
void Compare(const Case& c, const Hints& got, const Hints& want, bool allow_upward_closed,
             int& upward_closed, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [type, list] : want) {
    auto it = got.find(type);
    ASSERT_NE(it, got.end()) << what << " " << type;
    ASSERT_TRUE(it->second.has_value() && list.has_value()) << what;
    if (!it->second->upward_closed) {
      ASSERT_EQ(*it->second, *list) << what << " " << type;
      continue;
    }
    ASSERT_TRUE(allow_upward_closed) << what;
    ++upward_closed;
    ASSERT_EQ(AsSet(hints::Expand(*it->second)), AsSet(list->hints)) << what << " " << type;
  }
  (void)c;
}

TEST(MemoryHintsDifferentialTest, SmallMachinesBothForms) {
  std::mt19937_64 rng(20240611);
  int upward_closed = 0;
  int nonempty = 0;
  constexpr int kCases = 6000;
  for (int i = 0; i < kCases; ++i) {
    const int n = 1 + static_cast<int>(rng() % 10);
    const Case c = RandomCase(rng, n);
    const Hints want = testing::ReferenceCalculateHints(c.state, "pod", c.request);
    const bool fits = !want.empty() && !want.begin()->second->hints.empty();
    nonempty += fits ? 1 : 0;
    const std::string what = "case " + std::to_string(i);
    Compare(c, internal::CalculateHints(c.state, "pod", c.request, hints::NumaMask::kMaxNodes),
            want, false, upward_closed, what + " explicit");
    Compare(c, internal::CalculateHints(c.state, "pod", c.request, 0), want, true, upward_closed,
            what + " any form");
    Compare(c, internal::CalculateHints(c.state, "pod", c.request, kMaxExplicitNumaNodes), want,
            true, upward_closed, what + " default");
    if (HasFatalFailure()) return;
  }
  // The generator must exercise both forms and both outcomes.
  RecordProperty("upward_closed", upward_closed);
  RecordProperty("nonempty", nonempty);
  std::printf("%d cases: %d with hints, %d upward-closed lists\n", kCases, nonempty, upward_closed);
  EXPECT_GT(upward_closed, kCases / 10);
  EXPECT_GT(nonempty, kCases / 4);
  EXPECT_LT(nonempty, kCases);
}

TEST(MemoryHintsDifferentialTest, BoundedExplicitFormOnLargeMachines) {
  // Above kMaxExactNumaNodes the explicit form keeps the budgeted, narrowest-first walk.
  std::mt19937_64 rng(7);
  int upward_closed = 0;
  int cut = 0;
  for (int i = 0; i < 4; ++i) {
    const int n = 17 + static_cast<int>(rng() % 8);
    const Case c = RandomCase(rng, n);
    Hints want = testing::ReferenceCalculateHints(c.state, "pod", c.request);
    const Hints got =
        internal::CalculateHints(c.state, "pod", c.request, hints::NumaMask::kMaxNodes);
    // Beyond the dense merge (by the nodes that have memory of a requested type) only the
    // narrowest masks are kept, in kubelet's order: a prefix of the reference's list.
    for (auto& [type, list] : want) {
      auto it = got.find(type);
      if (it == got.end() || !it->second || !list) continue;
      const size_t kept = it->second->hints.size();
      if (kept == kMaxHintsWithoutDenseMerge && list->hints.size() > kept) {
        ASSERT_GT(n, hints::kMaxDenseMergeNodes) << "case " << i;
        list->hints.resize(kept);
        ++cut;
      }
    }
    Compare(c, got, want, false, upward_closed, "case " + std::to_string(i));
    if (HasFatalFailure()) return;
  }
  RecordProperty("cut", cut);
}

}  // namespace
}  // namespace topologyd::memory
