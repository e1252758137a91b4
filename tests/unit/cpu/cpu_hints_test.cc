// CPU topology hints (docs/cpu-policy.md, "Topology hints"): the upward-closed form against
// kubelet's explicit enumeration, and kubelet's preferred rule (capacity, not free CPUs).
#include "lib/cpu/cpu_hints.h"

#include <algorithm>
#include <random>
#include <set>

#include "gtest/gtest.h"

#include "tests/unit/cpu/kubelet_topologies.h"

namespace topologyd::cpu {
namespace {

using hints::NumaMask;
using hints::ResourceHints;
using hints::TopologyHint;
using testing::Cpus;

// Local stand-in for the hints module's expansion of the upward-closed form: every non-empty
// mask within the universe containing an entry, preferred iff equal to a preferred entry; in
// kubelet's order (size, then lexicographic).
std::vector<TopologyHint> Expand(const ResourceHints& upward) {
  std::vector<TopologyHint> out;
  const std::vector<int> positions = upward.universe.Ids();
  const size_t n = positions.size();
  for (uint64_t subset = 1; subset < (uint64_t{1} << n); ++subset) {
    uint64_t bits = 0;
    for (size_t i = 0; i < n; ++i) {
      if ((subset >> i) & 1U) bits |= uint64_t{1} << positions[i];
    }
    bool member = false;
    bool preferred = false;
    for (const TopologyHint& h : upward.hints) {
      if ((h.affinity->bits() & bits) == h.affinity->bits()) member = true;
      if (h.preferred && h.affinity->bits() == bits) preferred = true;
    }
    if (member) out.push_back(TopologyHint{NumaMask(bits), preferred});
  }
  std::sort(out.begin(), out.end(), [](const TopologyHint& a, const TopologyHint& b) {
    if (a.affinity->Count() != b.affinity->Count())
      return a.affinity->Count() < b.affinity->Count();
    return a.affinity->Ids() < b.affinity->Ids();
  });
  return out;
}

// A kubelet-style test machine: `numas` NUMA nodes of `per_numa` CPUs, `sockets` sockets.
CpuTopology Machine(int numas, int per_numa, int sockets, int threads = 1) {
  std::map<int, CpuInfo> details;
  const int total = numas * per_numa;
  for (int cpu = 0; cpu < total; ++cpu) {
    const int numa = cpu / per_numa;
    details[cpu] = CpuInfo{cpu / threads, numa * sockets / numas, numa, 0};
  }
  return CpuTopology(CpuCounters{total, total / threads, sockets, numas, 1}, details);
}

// A worked example (2 NUMA x 6 CPUs).
TEST(CpuHintsTest, SpecExample) {
  CpuTopology topo = Machine(2, 6, 2);
  const CpuSet available = Cpus("3-5,6-11");  // NUMA 0: 3 free, NUMA 1: 6 free
  auto explicit4 = GenerateCpuHintsExplicit(topo, available, CpuSet(), 4, false);
  ASSERT_TRUE(explicit4.ok());
  const std::vector<TopologyHint> want4 = {{NumaMask::Of({1}), true},
                                           {NumaMask::Of({0, 1}), false}};
  EXPECT_EQ(explicit4->hints, want4);
  ResourceHints upward4 = GenerateCpuHints(topo, available, CpuSet(), 4, false);
  EXPECT_TRUE(upward4.upward_closed);
  EXPECT_EQ(upward4.universe, NumaMask::Of({0, 1}));
  EXPECT_EQ(upward4.hints, std::vector<TopologyHint>({{NumaMask::Of({1}), true}}));
  EXPECT_EQ(Expand(upward4), want4);

  ResourceHints upward8 = GenerateCpuHints(topo, available, CpuSet(), 8, false);
  EXPECT_EQ(upward8.hints, std::vector<TopologyHint>({{NumaMask::Of({0, 1}), true}}));
  // Nothing fits: an empty list (cannot be satisfied).
  EXPECT_TRUE(GenerateCpuHints(topo, available, CpuSet(), 10, false).hints.empty());
}

// Expand(upward-closed) == kubelet's explicit list on random small machines, with
// reusable CPUs and with align-by-socket.
TEST(CpuHintsTest, UpwardClosedMatchesExplicitEnumeration) {
  std::mt19937 rng(20240607);
  for (int round = 0; round < 400; ++round) {
    const int numas = 1 + static_cast<int>(rng() % 6);
    const int per_numa = 1 + static_cast<int>(rng() % 4);
    const int sockets = (numas % 2 == 0 && rng() % 2 == 0) ? 2 : 1;
    CpuTopology topo = Machine(numas, per_numa, sockets);
    CpuSet available;
    CpuSet reusable;
    for (int cpu : topo.Cpus()) {
      const unsigned r = rng() % 5;
      if (r < 3) available.Add(cpu);
      if (r == 3 && rng() % 3 == 0) reusable.Add(cpu);
    }
    const int n = 1 + static_cast<int>(rng() % (numas * per_numa));
    const bool by_socket = rng() % 3 == 0;
    auto explicit_hints = GenerateCpuHintsExplicit(topo, available, reusable, n, by_socket);
    ASSERT_TRUE(explicit_hints.ok());
    ResourceHints upward = GenerateCpuHints(topo, available, reusable, n, by_socket);
    EXPECT_EQ(Expand(upward), explicit_hints->hints)
        << "numas=" << numas << " per_numa=" << per_numa << " n=" << n << " available=" << available
        << " reusable=" << reusable << " by_socket=" << by_socket;
  }
}

// On kubelet's topologies: all free, every request size, packed and align-by-socket.
TEST(CpuHintsTest, KubeletTopologiesMatchExplicit) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  for (const std::string name : {"topoDualSocketHT", "topoDualSocketMultiNumaPerSocketHT",
                                 "topoDualSocketMultiNumaPerSocketHTLarge"}) {
    auto topo = testing::KubeletTopology(name);
    ASSERT_TRUE(topo.ok());
    for (int n : {1, 3, 20, 33, 64, 100}) {
      if (n > topo->Cpus().Size()) continue;
      for (bool by_socket : {false, true}) {
        const CpuSet available = topo->Cpus().Difference(Cpus("0-2"));
        auto want = GenerateCpuHintsExplicit(*topo, available, CpuSet(), n, by_socket);
        ASSERT_TRUE(want.ok());
        EXPECT_EQ(Expand(GenerateCpuHints(*topo, available, CpuSet(), n, by_socket)), want->hints)
            << name << " n=" << n << " by_socket=" << by_socket;
      }
    }
  }
}

// The upward-closed form does not enumerate 2^64 masks on a 64-node machine.
TEST(CpuHintsTest, ManyNumaNodesWithoutEnumeration) {
  CpuTopology topo = Machine(64, 4, 64);
  ResourceHints one = GenerateCpuHints(topo, topo.Cpus(), CpuSet(), 3, false);
  EXPECT_EQ(one.hints.size(), 64u);
  for (const TopologyHint& h : one.hints) EXPECT_TRUE(h.preferred);
  EXPECT_EQ(one.universe.Count(), 64);
  // 6 CPUs need two nodes: C(64,2) minimal pairs, all preferred.
  ResourceHints two = GenerateCpuHints(topo, topo.Cpus(), CpuSet(), 6, false);
  EXPECT_EQ(two.hints.size(), 64u * 63u / 2u);
  EXPECT_FALSE(GenerateCpuHintsExplicit(topo, topo.Cpus(), CpuSet(), 6, false).ok());
}

// A request whose minimal masks are too many to list (C(64, 6) = 75 million for 24 CPUs on
// 64 nodes of 4) gets the narrowest ones in kubelet's order, bounded, instead of the whole
// search: the merge's first choice is among them.
TEST(CpuHintsTest, TooManyMinimalMasksKeepsTheNarrowestFirstOnes) {
  CpuTopology topo = Machine(64, 4, 64);
  const CpuSet available = topo.Cpus().Difference(Cpus("0"));  // node 0 has 3 free
  ResourceHints hints = GenerateCpuHints(topo, available, CpuSet(), 24, false);
  ASSERT_EQ(hints.hints.size(), kMaxMinimalMasks);
  // Six nodes, never node 0 with five others (23 CPUs): {1..6} first, then {1..5,7}, ...
  EXPECT_EQ(hints.hints[0], (TopologyHint{NumaMask::Of({1, 2, 3, 4, 5, 6}), true}));
  EXPECT_EQ(hints.hints[1], (TopologyHint{NumaMask::Of({1, 2, 3, 4, 5, 7}), true}));
  for (const TopologyHint& h : hints.hints) {
    EXPECT_EQ(h.affinity->Count(), 6);
    EXPECT_TRUE(h.preferred);
  }
  // Still the right nodes when the widest request fits only with every node.
  ResourceHints all = GenerateCpuHints(topo, available, CpuSet(), 255, false);
  ASSERT_EQ(all.hints.size(), 1u);
  EXPECT_EQ(all.hints[0].affinity->Count(), 64);
}

// Up to 16 nodes the bounds never cut the list: the most minimal masks 16 nodes can have,
// C(16, 8) = 12,870 (8 CPUs from 16 nodes of 1), are all there.
TEST(CpuHintsTest, SixteenNodesAreNeverCut) {
  CpuTopology topo = Machine(16, 1, 1);
  ResourceHints hints = GenerateCpuHints(topo, topo.Cpus(), CpuSet(), 8, false);
  EXPECT_EQ(hints.hints.size(), 12870u);
  std::set<uint64_t> distinct;
  for (const TopologyHint& h : hints.hints) distinct.insert(h.affinity->bits());
  EXPECT_EQ(distinct.size(), 12870u);
  // And with uneven free CPUs, the list is exactly the explicit enumeration's.
  const CpuSet uneven = Cpus("0-2,4,6-7,9-10,12,15");
  auto want = GenerateCpuHintsExplicit(topo, uneven, CpuSet(), 5, false);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(Expand(GenerateCpuHints(topo, uneven, CpuSet(), 5, false)), want->hints);
}

// Hints for a container that already has CPUs, and for shared-pool containers.
TEST(CpuHintsTest, ProviderAnswer) {
  CpuTopology topo = Machine(2, 6, 2);
  auto policy = StaticPolicy::Create(topo, {}, CpuSet());
  ASSERT_TRUE(policy.ok());
  CpuState state = *policy->Start(CpuState{});
  EXPECT_FALSE(GetTopologyHints(*policy, state, {"p", "shared", ContainerKind::kApp, 0}));
  state.assignments["p"]["c"] = Cpus("6-7");
  state.default_cpu_set = Cpus("0-5,8-11");
  auto same = GetTopologyHints(*policy, state, {"p", "c", ContainerKind::kApp, 2});
  ASSERT_TRUE(same.has_value());
  const hints::HintList& list = same->at("cpu");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->hints, std::vector<TopologyHint>({{NumaMask::Of({1}), true}}));
  auto different = GetTopologyHints(*policy, state, {"p", "c", ContainerKind::kApp, 3});
  ASSERT_TRUE(different.has_value());
  EXPECT_TRUE(different->at("cpu")->hints.empty());
  EXPECT_FALSE(different->at("cpu")->upward_closed);
}

// Pod scope (rule 8): hints for the pod's total, with what its containers already hold counted
// as reusable, regenerated from those CPUs once they make up the total, and an empty list when
// a container holds a different number than it asks for.
TEST(CpuHintsTest, PodScopeProviderAnswer) {
  CpuTopology topo = Machine(2, 6, 2);  // NUMA 0 = CPUs 0-5, NUMA 1 = CPUs 6-11
  auto policy = StaticPolicy::Create(topo, {}, CpuSet());
  ASSERT_TRUE(policy.ok());
  CpuState state = *policy->Start(CpuState{});
  const std::vector<ContainerRequest> pod = {{"p", "a", ContainerKind::kApp, 2},
                                             {"p", "b", ContainerKind::kApp, 2}};
  EXPECT_FALSE(GetPodTopologyHints(*policy, state, "p", {{"p", "s", ContainerKind::kApp, 0}}))
      << "a pod without exclusive CPUs has no preference";

  // Nothing held yet: 4 CPUs fit on either node.
  auto fresh = GetPodTopologyHints(*policy, state, "p", pod);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(Expand(*fresh->at("cpu")), std::vector<TopologyHint>({{NumaMask::Of({0}), true},
                                                                  {NumaMask::Of({1}), true},
                                                                  {NumaMask::Of({0, 1}), false}}));

  // "a" holds 6-7 (reusable for the pod) and NUMA 1 has nothing else free: 4 CPUs need both
  // nodes, and a mask without NUMA 1 would leave "a"'s CPUs out.
  state.assignments["p"]["a"] = Cpus("6-7");
  state.assignments["q"]["x"] = Cpus("8-11");
  state.default_cpu_set = Cpus("0-5");
  auto partial = GetPodTopologyHints(*policy, state, "p", pod);
  ASSERT_TRUE(partial.has_value());
  EXPECT_EQ(Expand(*partial->at("cpu")),
            std::vector<TopologyHint>({{NumaMask::Of({0, 1}), false}}));

  // Both containers hold their CPUs, all on NUMA 1: hints come from those CPUs alone.
  state.assignments["q"].erase("x");
  state.assignments["p"]["b"] = Cpus("8-9");
  state.default_cpu_set = Cpus("0-5,10-11");
  auto held = GetPodTopologyHints(*policy, state, "p", pod);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(Expand(*held->at("cpu")),
            std::vector<TopologyHint>({{NumaMask::Of({1}), true}, {NumaMask::Of({0, 1}), false}}));

  // "b" holds 3 CPUs but asks for 2: the pod cannot be satisfied.
  state.assignments["p"]["b"] = Cpus("8-10");
  auto wrong = GetPodTopologyHints(*policy, state, "p", pod);
  ASSERT_TRUE(wrong.has_value());
  EXPECT_TRUE(wrong->at("cpu")->hints.empty());
  EXPECT_FALSE(wrong->at("cpu")->upward_closed);
}

// Pod scope total: init containers vs app containers plus sidecars.
TEST(CpuHintsTest, PodGuaranteedCpus) {
  EXPECT_EQ(PodGuaranteedCpus({{"p", "i1", ContainerKind::kInit, 6},
                               {"p", "s1", ContainerKind::kRestartableInit, 2},
                               {"p", "i2", ContainerKind::kInit, 5},
                               {"p", "a", ContainerKind::kApp, 3}}),
            7);
  EXPECT_EQ(PodGuaranteedCpus({{"p", "s1", ContainerKind::kRestartableInit, 2},
                               {"p", "a", ContainerKind::kApp, 3},
                               {"p", "b", ContainerKind::kApp, 4}}),
            9);
}

}  // namespace
}  // namespace topologyd::cpu
