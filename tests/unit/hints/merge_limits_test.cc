// MergeWithin(): the inputs for which no polynomial merge is known stop with
// RESOURCE_EXHAUSTED and a message naming the limit; everything within the limits is answered
// exactly as by Merge(). No timing here: the counts are what is checked.
#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"

#include "lib/hints/merge.h"
#include "lib/hints/merge_internal.h"

namespace topologyd::hints {
namespace {

using internal::MergeStats;
using internal::MergeWithinForTest;
using internal::ReachEngine;

ProviderHints OneResource(const std::string& name, ResourceHints list) {
  return std::map<std::string, HintList>{{name, std::move(list)}};
}

// The known hard family: list i = {every node but i, any node}, nothing preferred. Every one
// of the 2^lists ANDs is reachable and no two lists agree on a preferred mask, so the merge
// must look at all of them; each extra list doubles the work.
MergeInput AllButOne(int nodes, int lists) {
  MergeInput in;
  in.num_nodes = nodes;
  in.policy = Policy::kBestEffort;
  const uint64_t all = NumaMask::FirstN(nodes).bits();
  for (int i = 0; i < lists; ++i) {
    ResourceHints rh;
    rh.hints = {TopologyHint{NumaMask(all & ~(uint64_t{1} << (i % nodes))), false},
                TopologyHint{std::nullopt, false}};
    in.providers.push_back(OneResource("r", rh));
  }
  return in;
}

MergeStats Measure(const MergeInput& in, const MergeLimits& limits = MergeLimits::Unlimited()) {
  MergeStats stats;
  (void)MergeWithinForTest(in, limits, ReachEngine::kAuto, &stats);
  return stats;
}

TEST(MergeLimitsTest, AdversarialListsStopAtTheMaskLimit) {
  const MergeInput in = AllButOne(26, 26);
  MergeStats stats;
  absl::StatusOr<MergeResult> r = MergeWithinForTest(in, MergeLimits(), ReachEngine::kAuto, &stats);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  // 2^21 reachable masks after 21 lists, 2^22 more being built from list 22: 3 * 2^21 held.
  EXPECT_EQ(r.status().message(),
            fmt::format("hint merge exceeds its memory limit: 6291456 NUMA masks held while "
                        "adding the 2 masks of hint list 22 of 26 (provider 22, resource \"r\") "
                        "to 2097152 reachable masks on 26 NUMA nodes (limit {} masks)",
                        MergeLimits::kDefaultMaxMasks));
  // Bounded: what was held never passed the limit by more than the set being built.
  EXPECT_LE(stats.peak_masks, 2 * MergeLimits::kDefaultMaxMasks);
  EXPECT_LE(stats.steps, MergeLimits::kDefaultMaxSteps);
}

TEST(MergeLimitsTest, NamedProvidersAreNamedInTheMessage) {
  MergeInput in = AllButOne(26, 26);
  for (size_t p = 0; p < in.providers.size(); ++p) {
    in.provider_names.push_back("provider-" + std::to_string(p));
  }
  in.provider_names.resize(in.providers.size() - 3);  // the last three go by position
  absl::StatusOr<MergeResult> r = MergeWithin(in);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find(
                "of hint list 22 of 26 (provider \"provider-21\", resource \"r\") to"),
            std::string::npos)
      << r.status();

  in.provider_names.resize(21);  // the list the merge stops at is unnamed
  r = MergeWithin(in);
  EXPECT_NE(r.status().message().find("of hint list 22 of 26 (provider 22, resource \"r\") to"),
            std::string::npos)
      << r.status();
}

TEST(MergeLimitsTest, MoreListsDoNotMeanMoreWork) {
  // The merge stops at the same list whatever follows it.
  const MergeStats a = Measure(AllButOne(26, 26), MergeLimits());
  const MergeStats b = Measure(AllButOne(40, 40), MergeLimits());
  EXPECT_EQ(a.peak_masks, b.peak_masks);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(MergeWithin(AllButOne(40, 40)).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(MergeLimitsTest, JustWithinTheLimitsIsAnsweredExactly) {
  const MergeInput in = AllButOne(14, 14);
  const MergeStats need = Measure(in);
  ASSERT_GT(need.peak_masks, uint64_t{1} << 14);  // 2^13 + 2^14 held in the last step
  const MergeResult want = Merge(in);
  // All but node 13: the narrowest reachable mask of 13 nodes (k = 13), integer-smallest.
  EXPECT_EQ(want, (MergeResult{TopologyHint{NumaMask::FirstN(13), false}, true}));

  // (At most 2^14 masks per set, so even a limit of exactly the peak leaves the sparse
  // engine's buffer its usual room and costs no extra steps.)
  absl::StatusOr<MergeResult> exact = MergeWithin(in, MergeLimits{need.peak_masks, need.steps});
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(*exact, want);

  absl::StatusOr<MergeResult> masks = MergeWithin(in, {need.peak_masks - 1, need.steps});
  EXPECT_EQ(masks.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(masks.status().message().find(fmt::format("(limit {} masks)", need.peak_masks - 1)),
            std::string::npos)
      << masks.status();

  absl::StatusOr<MergeResult> steps = MergeWithin(in, {need.peak_masks, need.steps - 1});
  EXPECT_EQ(steps.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(
      std::string(steps.status().message())
          .starts_with(fmt::format("hint merge exceeds its work limit: more than {} steps while ",
                                   need.steps - 1)))
      << steps.status();
}

// Every provider offers all 1023 masks of 10 nodes, each preferring another node: the merge
// switches to the dense transform, whose two tables of 2^10 entries count as 2048 masks.
MergeInput AllMasks(int nodes, int providers) {
  MergeInput in;
  in.num_nodes = nodes;
  in.policy = Policy::kRestricted;
  const uint64_t all = NumaMask::FirstN(nodes).bits();
  for (int p = 0; p < providers; ++p) {
    ResourceHints rh;
    for (uint64_t m = 1; m <= all; ++m) {
      rh.hints.push_back(TopologyHint{NumaMask(m), m == uint64_t{1} << p});
    }
    in.providers.push_back(OneResource("r" + std::to_string(p), rh));
  }
  return in;
}

TEST(MergeLimitsTest, TheDenseEngineIsUsedOnlyWhenItsTablesFit) {
  const MergeInput in = AllMasks(10, 3);
  const MergeResult want = Merge(in);
  EXPECT_GE(Measure(in).peak_masks, 2048U);  // dense
  // Too little room for the tables: the sparse engine answers, exactly, within the limit.
  MergeStats stats;
  absl::StatusOr<MergeResult> r = MergeWithinForTest(in, {2047, MergeLimits::Unlimited().max_steps},
                                                     ReachEngine::kAuto, &stats);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, want);
  EXPECT_LE(stats.peak_masks, 2047U);
  // Forced onto the dense engine, the same limit refuses.
  EXPECT_EQ(MergeWithinForTest(in, {2047, MergeLimits::Unlimited().max_steps}, ReachEngine::kDense,
                               nullptr)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
}

// Upward-closed lists {all but 2j, all but 2j+1} on 64 nodes: the antichain of minimal ANDs
// doubles with every list (docs/merge.md, "Honest bounds").
TEST(MergeLimitsTest, UpwardClosedAntichainsStopAtTheMaskLimit) {
  MergeInput in;
  in.num_nodes = 64;
  in.policy = Policy::kRestricted;
  const NumaMask all = NumaMask::FirstN(64);
  for (int j = 0; j < 32; ++j) {
    ResourceHints rh;
    rh.upward_closed = true;
    rh.universe = all;
    rh.hints = {TopologyHint{NumaMask(all.bits() & ~(uint64_t{1} << (2 * j))), false},
                TopologyHint{NumaMask(all.bits() & ~(uint64_t{1} << (2 * j + 1))), false}};
    in.providers.push_back(OneResource("cpu", rh));
  }
  absl::StatusOr<MergeResult> r = MergeWithin(in);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("memory limit"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("while intersecting the 2 minimal masks of hint list"),
            std::string::npos)
      << r.status();
  // Ten lists (2^10 minimal masks) are fine, and exact.
  in.providers.resize(10);
  absl::StatusOr<MergeResult> small = MergeWithin(in);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(*small, Merge(in));
}

// prefer-closest: the best 16-node set around node 0 among 63 free nodes is C(63, 15) ~ 10^14
// candidates to compare.
TEST(MergeLimitsTest, PreferClosestEnumerationStopsAtTheWorkLimit) {
  MergeInput in;
  in.num_nodes = 64;
  in.policy = Policy::kBestEffort;
  in.options.prefer_closest_numa_nodes = true;
  in.distances.assign(64, std::vector<double>(64, 20));
  for (int i = 0; i < 64; ++i) in.distances[size_t(i)][size_t(i)] = 10;
  ASSERT_TRUE(ValidateMergeInput(in).ok());
  ResourceHints wide;  // k = 16
  wide.hints = {TopologyHint{std::nullopt, false}, TopologyHint{NumaMask::FirstN(16), false}};
  ResourceHints around0;
  around0.upward_closed = true;
  around0.universe = NumaMask::FirstN(64);
  around0.hints = {TopologyHint{NumaMask::Of({0}), false}};
  in.providers = {OneResource("memory", wide), OneResource("cpu", around0)};
  absl::StatusOr<MergeResult> r = MergeWithin(in, {MergeLimits::kDefaultMaxMasks, 1'000'000});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("16-node sets within 64 nodes (prefer-closest-numa-nodes"),
            std::string::npos)
      << r.status();
}

TEST(MergeLimitsTest, ReducingALongUpwardClosedListIsCounted) {
  MergeInput in;
  in.num_nodes = 8;
  in.policy = Policy::kRestricted;
  ResourceHints rh;
  rh.upward_closed = true;
  rh.universe = NumaMask::FirstN(8);
  for (uint64_t m = 1; m < 256; ++m) rh.hints.push_back(TopologyHint{NumaMask(m), false});
  in.providers = {OneResource("cpu", rh)};
  absl::StatusOr<MergeResult> r = MergeWithin(in, {MergeLimits::kDefaultMaxMasks, 100});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_EQ(r.status().message(),
            "hint merge exceeds its work limit: more than 100 steps while reducing the 255 masks "
            "of hint list 1 of 1 (provider 1, resource \"cpu\") to the minimal ones on 8 NUMA "
            "nodes");
  EXPECT_EQ(*MergeWithin(in), Merge(in));
}

TEST(MergeLimitsTest, PolicyNoneAndPreferredAnswersCostNothingCounted) {
  MergeInput in = AllButOne(26, 26);
  in.policy = Policy::kNone;
  EXPECT_TRUE(MergeWithin(in, {0, 0}).ok());
  // A preferred "any node" in every list: phase 1 answers, the reachable sets are never built.
  in.policy = Policy::kRestricted;
  for (ProviderHints& p : in.providers) (*p)["r"]->hints[1].preferred = true;
  absl::StatusOr<MergeResult> r = MergeWithin(in, {0, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, Merge(in));
}

}  // namespace
}  // namespace topologyd::hints
