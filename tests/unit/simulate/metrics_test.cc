// The measures on cases small enough to compute by hand: a 2-node machine (admission_test_util
// Machine: 8 CPUs per node, CPUs 0-1 reserved on node 0, so 6 + 8 CPUs for containers).
#include "lib/simulate/metrics.h"

#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::simulate {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

TEST(StrandedTest, CountsWhatNoContainerOfTheSizeCanUseOnItsNode) {
  // Node 0: 3 free of size 4 -> all 3 stranded; node 1: 8 -> 0; node 2: 5 -> 1.
  EXPECT_EQ(Stranded({3, 8, 5}, 4), 4u);
  EXPECT_EQ(Stranded({0, 0}, 4), 0u);
  EXPECT_EQ(Stranded({3, 8, 5}, 1), 0u);
  // No Guaranteed container in the workload: nothing can be called stranded.
  EXPECT_EQ(Stranded({3, 8, 5}, 0), 0u);
}

TEST(MostCommonTest, TakesTheSmallestOfATie) {
  EXPECT_EQ(MostCommon({4, 2, 4, 2, 1}), 2u);
  EXPECT_EQ(MostCommon({8, 4, 8}), 8u);
  EXPECT_EQ(MostCommon({}), 0u);
}

TEST(FewestNodesTest, TakesTheLargestNodesFirstPerResource) {
  const topology::Topology machine = Machine(MachineSpec{});
  const admission::NodePolicy node = Node(BaseConfig("best-effort", "0-1"), machine);
  EXPECT_EQ(FewestNodes(node, 0, {}, {}), 0);
  EXPECT_EQ(FewestNodes(node, 8, {}, {}), 1);   // node 1 has 8
  EXPECT_EQ(FewestNodes(node, 9, {}, {}), 2);   // 8 + 6
  EXPECT_EQ(FewestNodes(node, 20, {}, {}), 2);  // does not fit at all: every node
  // 2 CPUs fit one node, 20 GiB of memory (under 16 GiB per node) do not: 2.
  EXPECT_EQ(FewestNodes(node, 2, {{"memory", 20 * kGi}}, {}), 2);
  EXPECT_EQ(FewestNodes(node, 2, {{"memory", 2 * kGi}}, {}), 1);
}

TEST(PlacementTest, UnionOfCpuMemoryAndDeviceNodes) {
  const topology::Topology machine = Machine(MachineSpec{});
  const admission::NodePolicy node = Node(BaseConfig("best-effort", "0-1"), machine);
  state::ContainerRecord c;
  c.exclusive = true;
  c.cpus = *CpuSet::Parse("8-9");  // node 1
  c.memory[1]["memory"] = kGi;
  Placement p = PlacementOf(node, c);
  EXPECT_TRUE(p.pinned);
  EXPECT_EQ(p.nodes, 1);
  EXPECT_EQ(p.fewest, 1);

  c.memory[0]["memory"] = kGi;  // memory on the other node too
  p = PlacementOf(node, c);
  EXPECT_EQ(p.nodes, 2);
  EXPECT_EQ(p.fewest, 1);  // 2 CPUs and 2 GiB fit one node

  state::ContainerRecord shared;  // shared pool, no memory blocks: nothing placed
  shared.cpus = *CpuSet::Parse("2-15");
  EXPECT_FALSE(PlacementOf(node, shared).pinned);
}

TEST(WorkloadSizesTest, WholeCpusOfGuaranteedPodsOnly) {
  WorkloadSizes sizes;
  AddSizes(Pod("a", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})},
               {Ctr("init", {{"cpu", "6"}, {"memory", "1Gi"}})}),
           sizes);
  AddSizes(Pod("b", {Ctr("app", {{"cpu", "1500m"}, {"memory", "2Gi"}})}), sizes);
  pod::Pod burstable = Pod("c", {Ctr("app", {{"cpu", "4"}})});
  AddSizes(burstable, sizes);
  EXPECT_EQ(sizes.cpus, (std::vector<uint64_t>{2}));  // not the init container, not 1500m
  EXPECT_EQ(sizes.memory["memory"], (std::vector<uint64_t>{kGi, 2 * kGi}));
}

}  // namespace
}  // namespace topologyd::simulate
