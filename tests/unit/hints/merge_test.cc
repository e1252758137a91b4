// Table tests: one or more per rule of kubelet's Topology Manager (docs/merge.md, "kubelet's
// rules": filtering, merging, policies) and of the closed form ("Algorithm"), checked against
// hand-derived results.
#include "lib/hints/merge.h"

#include <optional>

#include "gtest/gtest.h"

#include "lib/hints/expand.h"

namespace topologyd::hints {
namespace {

TopologyHint H(std::vector<int> ids, bool preferred) {
  return TopologyHint{NumaMask::Of(ids), preferred};
}
TopologyHint Any(bool preferred) { return TopologyHint{std::nullopt, preferred}; }

ProviderHints Provider(std::map<std::string, HintList> resources) { return resources; }
HintList List(std::vector<TopologyHint> hints) {
  return ResourceHints{std::move(hints), false, {}};
}
HintList UpClosed(std::vector<TopologyHint> generators, NumaMask universe) {
  return ResourceHints{std::move(generators), true, universe};
}

MergeResult RunMerge(int nodes, Policy policy, std::vector<ProviderHints> providers,
                     bool closest = false, std::vector<std::vector<double>> distances = {}) {
  MergeInput in;
  in.num_nodes = nodes;
  in.policy = policy;
  in.options.prefer_closest_numa_nodes = closest;
  in.distances = std::move(distances);
  in.providers = std::move(providers);
  return Merge(in);
}

MergeResult Result(std::optional<std::vector<int>> ids, bool preferred, bool admit) {
  MergeResult r;
  if (ids) r.hint.affinity = NumaMask::Of(*ids);
  r.hint.preferred = preferred;
  r.admit = admit;
  return r;
}

const std::vector<std::vector<double>> kFourNodeDistances = {
    {10, 11, 12, 12}, {11, 10, 12, 12}, {12, 12, 10, 11}, {12, 12, 11, 10}};

// Filtering: nil map and empty map mean "no preference"; nil list too; an empty list means "cannot
// be satisfied".
TEST(MergeTest, ProviderFilteringDistinctions) {
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {std::nullopt}),
            Result(std::vector{0, 1}, true, true));
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {Provider({})}),
            Result(std::vector{0, 1}, true, true));
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {Provider({{"cpu", std::nullopt}})}),
            Result(std::vector{0, 1}, true, true));
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {Provider({{"cpu", List({})}})}),
            Result(std::vector{0, 1}, false, false));
  // A nil-affinity hint inside a list is "any node" with its own preferred flag.
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {Provider({{"cpu", List({Any(false)})}})}),
            Result(std::vector{0, 1}, false, false));
}

// Filtering: zero providers.
TEST(MergeTest, ZeroProviders) {
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, {}), Result(std::vector{0, 1, 2, 3}, true, true));
  EXPECT_EQ(RunMerge(4, Policy::kSingleNumaNode, {}), Result(std::nullopt, true, true));
  EXPECT_EQ(RunMerge(4, Policy::kNone, {}), Result(std::nullopt, false, true));
}

// Merging one permutation: preferred only if every hint is preferred and all non-nil affinities are
// equal.
TEST(MergeTest, PreferredRequiresEqualAffinities) {
  EXPECT_EQ(RunMerge(2, Policy::kRestricted,
                     {Provider({{"a", List({H({0}, true)})}}),
                      Provider({{"b", List({H({0, 1}, true)})}})}),
            Result(std::vector{0}, false, false));
  EXPECT_EQ(
      RunMerge(2, Policy::kRestricted,
               {Provider({{"a", List({H({0}, true)})}}), Provider({{"b", List({Any(true)})}})}),
      Result(std::vector{0}, true, true));
}

// Narrowness is by count, then by integer value: {1,2} (6) beats {0,3} (9).
TEST(MergeTest, IntegerTieBreakNotLowestBit) {
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort,
                     {Provider({{"a", List({H({0, 3}, true), H({1, 2}, true)})}})}),
            Result(std::vector{1, 2}, true, true));
}

// k and compare(): non-preferred candidates prefer exactly k nodes, then the largest below k, then
// the smallest above k.
TEST(MergeTest, BestNonPreferredAffinityCount) {
  // k = 2 (second list's narrowest). Reachable: {0,1} (2 nodes) and {1} (1 node).
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort,
                     {Provider({{"a", List({H({0, 1, 2}, false), H({1}, false)})}}),
                      Provider({{"b", List({H({0, 1}, false), H({1, 2, 3}, false)})}})}),
            Result(std::vector{0, 1}, false, true));
  // k = 3: {0,1,3} has exactly k nodes and beats the narrower {1}.
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort,
                     {Provider({{"a", List({H({0, 1, 2, 3}, false), H({1}, false)})}}),
                      Provider({{"b", List({H({0, 1, 3}, false)})}})}),
            Result(std::vector{0, 1, 3}, false, true));
  // An empty (non-nil) mask counts 0 for k and never wins.
  EXPECT_EQ(RunMerge(2, Policy::kBestEffort,
                     {Provider({{"a", List({H({}, false), H({0, 1}, false)})}}),
                      Provider({{"b", List({H({0}, false), H({1}, false)})}})}),
            Result(std::vector{0}, false, true));
}

// prefer-closest-numa-nodes breaks ties between equally wide masks by average distance.
TEST(MergeTest, PreferClosestUsesAverageDistance) {
  std::vector<ProviderHints> p = {Provider({{"a", List({H({0, 2}, true), H({2, 3}, true)})}})};
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, p, false, kFourNodeDistances),
            Result(std::vector{0, 2}, true, true));
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, p, true, kFourNodeDistances),
            Result(std::vector{2, 3}, true, true));
  EXPECT_EQ(RunMerge(4, Policy::kRestricted, p, true, kFourNodeDistances),
            Result(std::vector{2, 3}, true, true));
  // Never for single-numa-node; equal averages fall back to the integer order.
  EXPECT_DOUBLE_EQ(AverageDistance(NumaMask::Of({0, 1}), kFourNodeDistances), 10.5);
  EXPECT_DOUBLE_EQ(AverageDistance(NumaMask::Of({0, 2}), kFourNodeDistances), 11);
  EXPECT_DOUBLE_EQ(AverageDistance(NumaMask::Of({0, 2, 3}), kFourNodeDistances), 100.0 / 9);
  EXPECT_EQ(AverageDistance(NumaMask(), kFourNodeDistances), 0);
  std::vector<ProviderHints> tie = {Provider({{"a", List({H({2, 3}, true), H({0, 1}, true)})}})};
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, tie, true, kFourNodeDistances),
            Result(std::vector{0, 1}, true, true));
}

// prefer-closest also orders non-preferred candidates and reaches into upward-closed lists
// without expanding them.
TEST(MergeTest, PreferClosestAmongNonPreferredAndUpwardClosed) {
  // Both sizes 2 < k = 4: case 3cc compares the masks.
  std::vector<ProviderHints> p = {Provider({{"a", List({H({0, 2}, false), H({2, 3}, false)})}}),
                                  Provider({{"b", List({H({0, 1, 2, 3}, false)})}})};
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, p, false, kFourNodeDistances),
            Result(std::vector{0, 2}, false, true));
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, p, true, kFourNodeDistances),
            Result(std::vector{2, 3}, false, true));
  // Upward-closed: every mask containing node 2 is reachable; k = 2 picks among {0,2} (11),
  // {1,2} (11) and {2,3} (10.5).
  std::vector<ProviderHints> q = {
      Provider({{"cpu", UpClosed({H({0, 2}, false), H({2, 3}, false)}, NumaMask::FirstN(4))}}),
      Provider({{"gpu", UpClosed({H({2}, false)}, NumaMask::FirstN(4))}})};
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, q, false, kFourNodeDistances),
            Result(std::vector{0, 2}, false, true));
  EXPECT_EQ(RunMerge(4, Policy::kBestEffort, q, true, kFourNodeDistances),
            Result(std::vector{2, 3}, false, true));
}

// single-numa-node filters, reports the default mask as nil, admits iff preferred.
TEST(MergeTest, SingleNumaNode) {
  // Only preferred one-node hints survive: {1} is common.
  EXPECT_EQ(RunMerge(4, Policy::kSingleNumaNode,
                     {Provider({{"a", List({H({0, 1}, true), H({1}, true)})}}),
                      Provider({{"b", List({H({1}, true), H({1, 2}, false)})}})}),
            Result(std::vector{1}, true, true));
  // A list left empty kills every permutation.
  EXPECT_EQ(RunMerge(4, Policy::kSingleNumaNode, {Provider({{"a", List({H({0, 1}, true)})}})}),
            Result(std::nullopt, false, false));
  // On a one-node machine an aligned {0} is reported as nil.
  EXPECT_EQ(RunMerge(1, Policy::kSingleNumaNode, {Provider({{"a", List({H({0}, true)})}})}),
            Result(std::nullopt, true, true));
  // prefer-closest is ignored: the lowest common node wins.
  EXPECT_EQ(
      RunMerge(4, Policy::kSingleNumaNode, {Provider({{"a", List({H({3}, true), H({0}, true)})}})},
               true, kFourNodeDistances),
      Result(std::vector{0}, true, true));
}

// Masks reaching beyond the machine are cut by the AND with the default affinity, yet count
// for k with their raw size.
TEST(MergeTest, BitsOutsideTheMachine) {
  EXPECT_EQ(RunMerge(2, Policy::kRestricted, {Provider({{"a", List({H({1, 5}, true)})}})}),
            Result(std::vector{1}, true, true));
  EXPECT_EQ(RunMerge(2, Policy::kRestricted,
                     {Provider({{"a", List({H({0, 5}, false)})}}),
                      Provider({{"b", List({H({2}, true)})}})}),
            Result(std::vector{0, 1}, false, false));
}

// Upward-closed lists on a 64-node machine: minimal masks only, never 2^64 hints.
TEST(MergeTest, UpwardClosedOnSixtyFourNodes) {
  const NumaMask all = NumaMask::FirstN(64);
  // CPUs fit on any two adjacent nodes (preferred).
  std::vector<TopologyHint> cpu;
  for (int i = 0; i + 1 < 64; ++i) cpu.push_back(H({i, i + 1}, true));
  // A GPU on node 40 whose provider only offers masks within nodes 40-43.
  const NumaMask gpu_nodes = NumaMask::Of({40, 41, 42, 43});
  std::vector<ProviderHints> p = {Provider({{"cpu", UpClosed(cpu, all)}}),
                                  Provider({{"gpu", UpClosed({H({40}, true)}, gpu_nodes)}})};
  // No common preferred mask; k = 2; every mask within 40-43 is a reachable AND.
  EXPECT_EQ(RunMerge(64, Policy::kBestEffort, p), Result(std::vector{40, 41}, false, true));
  EXPECT_EQ(RunMerge(64, Policy::kRestricted, p), Result(std::vector{40, 41}, false, false));
  // Without the universe restriction the AND of {0,1} and {0,1,40} is reachable: kubelet's
  // merge may drop a node a resource needs.
  p[1] = Provider({{"gpu", UpClosed({H({40}, true)}, all)}});
  EXPECT_EQ(RunMerge(64, Policy::kBestEffort, p), Result(std::vector{0, 1}, false, true));
  // The GPU may also use node 41 preferably: {40,41} is preferred by both.
  p[1] = Provider({{"gpu", UpClosed({H({40}, true), H({40, 41}, true)}, all)}});
  EXPECT_EQ(RunMerge(64, Policy::kRestricted, p), Result(std::vector{40, 41}, true, true));
  // single-numa-node on 64 nodes keeps the preferred one-node masks only.
  EXPECT_EQ(RunMerge(64, Policy::kSingleNumaNode,
                     {Provider({{"a", List({H({63}, true), H({5}, true)})}}),
                      Provider({{"b", UpClosed({H({63}, true), H({62}, false)}, all)}})}),
            Result(std::vector{63}, true, true));
}

TEST(MergeTest, ExpandListsEveryMaskAboveAGenerator) {
  ResourceHints rh{
      {H({0}, true), H({1, 2}, false), Any(true), H({5}, true)}, true, NumaMask::FirstN(3)};
  std::vector<TopologyHint> want = {H({0}, true), H({0, 1}, false), H({0, 2}, false),
                                    H({1, 2}, false), H({0, 1, 2}, false)};
  EXPECT_EQ(Expand(rh), want);
  ResourceHints plain{{H({1}, false), Any(true)}, false, {}};
  EXPECT_EQ(Expand(plain), plain.hints);
}

TEST(MergeTest, ValidateMergeInput) {
  MergeInput in;
  in.num_nodes = 2;
  EXPECT_TRUE(ValidateMergeInput(in).ok());
  in.options.prefer_closest_numa_nodes = true;
  EXPECT_EQ(ValidateMergeInput(in).code(), absl::StatusCode::kInvalidArgument);
  in.policy = Policy::kSingleNumaNode;
  EXPECT_TRUE(ValidateMergeInput(in).ok());
  in.distances = {{10, 20}};
  EXPECT_EQ(ValidateMergeInput(in).code(), absl::StatusCode::kInvalidArgument);
  in.num_nodes = 65;
  in.distances.clear();
  EXPECT_EQ(ValidateMergeInput(in).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MergeTest, ManyMinimalMasksOnSixtyFourNodes) {
  // A CPU request spanning 3 of 64 nodes: C(64, 3) = 41,664 preferred minimal masks, plus
  // redundant wider generators (dominated, dropped by the merge's minimalization).
  std::vector<TopologyHint> generators;
  for (int a = 0; a < 64; ++a) {
    for (int b = a + 1; b < 64; ++b) {
      for (int c = b + 1; c < 64; ++c) generators.push_back(H({a, b, c}, true));
    }
  }
  ASSERT_EQ(generators.size(), 41664U);
  for (int i = 0; i < 200; ++i) {
    generators.push_back(
        H({i % 64, (i * 7 + 1) % 64, (i * 13 + 2) % 64, (i * 29 + 3) % 64, (i * 31 + 4) % 64},
          false));
  }
  const NumaMask all = NumaMask::FirstN(64);
  const auto cpu = Provider({{"cpu", UpClosed(generators, all)}});
  EXPECT_EQ(RunMerge(64, Policy::kBestEffort, {cpu}),
            Result(std::vector<int>{0, 1, 2}, true, true));
  const auto dev = Provider({{"dev", List({H({0, 1, 2, 3}, false), H({5, 6, 7}, true)})}});
  EXPECT_EQ(RunMerge(64, Policy::kRestricted, {cpu, dev}),
            Result(std::vector<int>{5, 6, 7}, true, true));
  // No common preferred mask: among the non-preferred ANDs the size of the widest list's
  // narrowest hint (4) wins, the smallest value first.
  const auto wide = Provider({{"dev", List({H({0, 1, 2, 3}, false)})}});
  EXPECT_EQ(RunMerge(64, Policy::kBestEffort, {cpu, wide}),
            Result(std::vector<int>{0, 1, 2, 3}, false, true));
}

}  // namespace
}  // namespace topologyd::hints
