// kubelet's combination count: each list's length checked against the brute-force
// reference's expansion (tests/unit/hints/reference_merge.h), then the product over a step.
#include "lib/simulate/combinations.h"

#include <random>

#include "gtest/gtest.h"

#include "tests/unit/hints/reference_merge.h"

namespace topologyd::simulate {
namespace {

using hints::NumaMask;
using hints::Policy;
using hints::ResourceHints;
using hints::TopologyHint;

TEST(KubeletListLengthTest, UpwardClosedListsCountAsTheirExpansion) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int nodes = 1 + static_cast<int>(rng() % 12);
    ResourceHints list;
    list.upward_closed = true;
    list.universe = NumaMask::FirstN(nodes);
    const int entries = 1 + static_cast<int>(rng() % 5);
    for (int e = 0; e < entries; ++e) {
      const uint64_t mask = (rng() & list.universe.bits()) | (uint64_t{1} << (rng() % nodes));
      list.hints.push_back(TopologyHint{NumaMask(mask), (rng() % 2) == 0});
    }
    const double expected = static_cast<double>(hints::reference::ExpandPlain(list).size());
    EXPECT_EQ(KubeletListLength(list, Policy::kRestricted), expected) << "round " << round;
  }
}

TEST(KubeletListLengthTest, FiltersAsKubeletDoes) {
  ResourceHints list;  // explicit: {0} preferred, {1} not, {0,1} preferred, any preferred
  list.hints = {TopologyHint{NumaMask::Of({0}), true}, TopologyHint{NumaMask::Of({1}), false},
                TopologyHint{NumaMask::Of({0, 1}), true}, TopologyHint{std::nullopt, true}};
  EXPECT_EQ(KubeletListLength(list, Policy::kBestEffort), 4);
  // single-numa-node keeps preferred hints of one node or of any node.
  EXPECT_EQ(KubeletListLength(list, Policy::kSingleNumaNode), 2);
  EXPECT_EQ(KubeletListLength(std::nullopt, Policy::kBestEffort), 1);     // no preference
  EXPECT_EQ(KubeletListLength(ResourceHints{}, Policy::kBestEffort), 1);  // cannot be satisfied
}

TEST(KubeletCombinationsTest, ProductOverProvidersAndResourcesSummedOverSteps) {
  // Every non-empty mask of 8 nodes from the one-node masks: 255 per list.
  ResourceHints all;
  all.upward_closed = true;
  all.universe = NumaMask::FirstN(8);
  for (int i = 0; i < 8; ++i) all.hints.push_back(TopologyHint{NumaMask::Of({i}), true});
  admission::MergeStep step;
  step.providers.push_back({"devices", std::nullopt});
  step.providers.push_back({"cpu", std::map<std::string, hints::HintList>{{"cpu", all}}});
  step.providers.push_back(
      {"memory", std::map<std::string, hints::HintList>{{"memory", all}, {"hugepages-1Gi", all}}});
  EXPECT_EQ(KubeletCombinations(step, Policy::kRestricted), 255.0 * 255 * 255);
  EXPECT_EQ(KubeletCombinations(step, Policy::kSingleNumaNode), 8.0 * 8 * 8);

  admission::Explanation e;
  e.policy = Policy::kRestricted;
  e.merges = {step, step};
  EXPECT_EQ(KubeletCombinations(e), 2 * 255.0 * 255 * 255);
}

TEST(KubeletListLengthTest, LargeUniversesStayCheapAndExact) {
  // 40 nodes, every one-node mask: 2^40 - 1 supersets, counted without enumerating them.
  ResourceHints list;
  list.upward_closed = true;
  list.universe = NumaMask::FirstN(40);
  for (int i = 0; i < 40; ++i) list.hints.push_back(TopologyHint{NumaMask::Of({i}), true});
  EXPECT_EQ(KubeletListLength(list, Policy::kRestricted), std::ldexp(1.0, 40) - 1);
}

}  // namespace
}  // namespace topologyd::simulate
