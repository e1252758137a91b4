#include "lib/cgroup/planner.h"

#include <map>
#include <random>
#include <string>

#include "gtest/gtest.h"

#include "lib/cgroup/naming.h"
#include "tests/support/cpuset_literal.h"

namespace topologyd::cgroup {
namespace {

using topologyd::testing::S;

std::string Show(const std::vector<CpusetWrite>& plan) {
  std::string out;
  for (const CpusetWrite& w : plan) {
    out += w.cgroup + ":" + std::string(CpusetFileName(w.file).substr(7)) + "=" +
           w.value.ToString() + (w.phase == WritePhase::kWiden ? "+" : "-") + " ";
  }
  return out;
}

TEST(PlanWritesTest, SharedPoolShrinkNarrowsEverySharedContainer) {
  // An exclusive container takes CPUs 2-3 out of the shared pool 0-3.
  CurrentCpusets current = {
      {"pod/a", {S("0-3"), S("0")}}, {"pod/b", {S("0-3"), S("0")}}, {"pod2/x", {S("0-3"), S("0")}}};
  std::vector<CpusetTarget> desired = {
      {"pod/b", S("0-1"), S("0")}, {"pod/a", S("0-1"), S("0")}, {"pod2/x", S("2-3"), S("0")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, desired)),
            "pod/a:cpus=0-1- pod/b:cpus=0-1- pod2/x:cpus=2-3- ");
}

TEST(PlanWritesTest, SharedPoolGrowWidensEverySharedContainer) {
  CurrentCpusets current = {{"pod/a", {S("0-1"), S("0")}}, {"pod/b", {S("0-1"), S("0")}}};
  std::vector<CpusetTarget> desired = {{"pod/a", S("0-3"), S("0")}, {"pod/b", S("0-3"), S("0")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, desired)),
            "pod/a:cpus=0-3+ pod/b:cpus=0-3+ ");
}

TEST(PlanWritesTest, ParentsFirstWhenWideningChildrenFirstWhenNarrowing) {
  CurrentCpusets current = {
      {"k", {S("0-1"), S("0")}}, {"k/p", {S("0-1"), S("0")}}, {"k/p/c", {S("0-1"), S("0")}}};
  std::vector<CpusetTarget> widen = {
      {"k/p/c", S("0-3"), S("0-1")}, {"k/p", S("0-3"), S("0-1")}, {"k", S("0-3"), S("0-1")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, widen)),
            "k:mems=0-1+ k:cpus=0-3+ k/p:mems=0-1+ k/p:cpus=0-3+ k/p/c:mems=0-1+ "
            "k/p/c:cpus=0-3+ ");

  CurrentCpusets wide = {
      {"k", {S("0-3"), S("0-1")}}, {"k/p", {S("0-3"), S("0-1")}}, {"k/p/c", {S("0-3"), S("0-1")}}};
  std::vector<CpusetTarget> narrow = {
      {"k", S("0"), S("0")}, {"k/p", S("0"), S("0")}, {"k/p/c", S("0"), S("0")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, wide, narrow)),
            "k/p/c:cpus=0- k/p/c:mems=0- k/p:cpus=0- k/p:mems=0- k:cpus=0- k:mems=0- ");
}

TEST(PlanWritesTest, SidewaysLeafIsWrittenOnce) {
  CurrentCpusets current = {{"pod/excl", {S("2"), S("0")}}};
  std::vector<CpusetTarget> desired = {{"pod/excl", S("3"), std::nullopt}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, desired)), "pod/excl:cpus=3+ ");
}

TEST(PlanWritesTest, SidewaysParentInV1GoesThroughTheUnion) {
  // The pod moves from 0-1 to 2-3 with its container: the parent must hold both meanwhile.
  CurrentCpusets current = {{"pod", {S("0-1"), S("0")}}, {"pod/c", {S("0-1"), S("0")}}};
  std::vector<CpusetTarget> desired = {{"pod", S("2-3"), std::nullopt},
                                       {"pod/c", S("2-3"), std::nullopt}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, desired)),
            "pod:cpus=0-3+ pod/c:cpus=2-3+ pod:cpus=2-3- ");
  // v2 has no subset rule: direct writes.
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV2, current, desired)),
            "pod:cpus=2-3+ pod/c:cpus=2-3+ ");
}

TEST(PlanWritesTest, SkipsWhatIsAlreadyRightAndWritesWhatIsUnknown) {
  CurrentCpusets current = {{"a", {S("0-1"), S("0")}}, {"b", {std::nullopt, S("0")}}};
  std::vector<CpusetTarget> desired = {
      {"a", S("0-1"), S("0")}, {"b", S("0-1"), S("0")}, {"c", S("1"), S("0")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, current, desired)),
            "b:cpus=0-1+ c:mems=0+ c:cpus=1+ ");
}

TEST(PlanWritesTest, V2EmptyMeansInheritedNotEmpty) {
  CurrentCpusets current = {{"a", {S(""), S("")}}};
  std::vector<CpusetTarget> desired = {{"a", S("0-1"), S("0")}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV2, current, desired)), "a:mems=0+ a:cpus=0-1+ ");
}

TEST(PlanWritesTest, IgnoresDuplicateTargetsAfterTheFirst) {
  std::vector<CpusetTarget> desired = {{"a", S("1"), std::nullopt}, {"a", S("2"), std::nullopt}};
  EXPECT_EQ(Show(PlanWrites(CgroupVersion::kV1, {}, desired)), "a:cpus=1+ ");
}

// Randomized: trees of managed cgroups whose old and new states both satisfy v1's rule
// (child within parent). Replaying the plan against a model of the kernel must never violate
// the rule, never write an empty set, and must end in the desired state.
TEST(PlanWritesTest, RandomPlansNeverBreakV1SubsetRules) {
  std::mt19937 rng(12345);
  const std::vector<std::string> tree = {"k",     "k/a",   "k/a/1", "k/a/2",  "k/b",
                                         "k/b/1", "k/b/2", "k/c",   "k/c/1/x"};
  // k/c/1 is unmanaged: k/c/1/x's nearest managed ancestor is k/c.
  auto parent_of = [&](const std::string& path) -> std::string {
    std::vector<std::string> ancestors = CgroupAncestors(path);
    for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
      if (std::find(tree.begin(), tree.end(), *it) != tree.end()) return *it;
    }
    return "";
  };
  auto random_state = [&]() {
    // Children take random non-empty subsets of their parent's sets (top-down; tree is sorted).
    std::map<std::string, std::pair<CpuSet, CpuSet>> state;
    for (const std::string& c : tree) {
      const std::string p = parent_of(c);
      CpuSet pc = p.empty() ? CpuSet::Range(0, 7) : state[p].first;
      CpuSet pm = p.empty() ? CpuSet::Range(0, 3) : state[p].second;
      CpuSet cpus, mems;
      for (int cpu : pc) {
        if (rng() % 2) cpus.Add(cpu);
      }
      for (int m : pm) {
        if (rng() % 2) mems.Add(m);
      }
      if (cpus.IsEmpty()) cpus.Add(pc.Min());
      if (mems.IsEmpty()) mems.Add(pm.Min());
      state[c] = {cpus, mems};
    }
    return state;
  };
  for (int round = 0; round < 2000; ++round) {
    auto before = random_state();
    auto after = random_state();
    CurrentCpusets current;
    std::vector<CpusetTarget> desired;
    for (const std::string& c : tree) {
      current[c] = {before[c].first, before[c].second};
      desired.push_back({c, after[c].first, after[c].second});
    }
    std::shuffle(desired.begin(), desired.end(), rng);
    auto model = before;
    for (const CpusetWrite& w : PlanWrites(CgroupVersion::kV1, current, desired)) {
      ASSERT_FALSE(w.value.IsEmpty());
      auto get = [&](const std::string& c) -> CpuSet& {
        return w.file == CpusetFile::kCpus ? model[c].first : model[c].second;
      };
      const std::string p = parent_of(w.cgroup);
      if (!p.empty()) {
        ASSERT_TRUE(w.value.IsSubsetOf(get(p))) << "round " << round << ": " << w.cgroup;
      }
      for (const std::string& c : tree) {
        if (parent_of(c) == w.cgroup) {
          ASSERT_TRUE(get(c).IsSubsetOf(w.value)) << "round " << round << ": " << w.cgroup;
        }
      }
      get(w.cgroup) = w.value;
    }
    ASSERT_EQ(model, after) << "round " << round;
  }
}

}  // namespace
}  // namespace topologyd::cgroup
