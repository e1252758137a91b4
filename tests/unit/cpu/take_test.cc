// The allocators on kubelet's own cases: every row is transcribed from kubelet's
// cpu_assignment_test.go (commonTakeByTopologyTestCases, TestTakeByTopologyNUMAPacked,
// TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption, TestTakeByTopologyNUMADistributed)
// or is a worked example of kubelet's documented behaviour (docs/cpu-policy.md; marked "spec").
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "lib/cpu/take_distributed.h"
#include "lib/cpu/take_packed.h"
#include "tests/unit/cpu/kubelet_topologies.h"

namespace topologyd::cpu {
namespace {

using testing::Cpus;
using testing::KubeletTopology;

struct TakeCase {
  std::string description;
  std::string topology;
  std::string available;
  int n;
  std::string expect;      // cpu list
  std::string error = "";  // exact kubelet error text when refused
};

// Rows kubelet runs through both the packed and the distributed (cpuGroupSize 1) allocator.
const std::vector<TakeCase>& CommonCases() {
  static const std::vector<TakeCase> kCases = {
      {"take more cpus than are available from single socket with HT", "topoSingleSocketHT",
       "0,2,4,6", 5, "", "not enough cpus available to satisfy request: requested=5, available=4"},
      {"take zero cpus from single socket with HT", "topoSingleSocketHT", "0-7", 0, ""},
      {"take one cpu from single socket with HT", "topoSingleSocketHT", "0-7", 1, "0"},
      {"take one cpu from single socket with HT, some cpus are taken", "topoSingleSocketHT",
       "1,3,5-7", 1, "6"},
      {"take two cpus from single socket with HT", "topoSingleSocketHT", "0-7", 2, "0,4"},
      {"take all cpus from single socket with HT", "topoSingleSocketHT", "0-7", 8, "0-7"},
      {"take two cpus from single socket with HT, only one core totally free", "topoSingleSocketHT",
       "0-3,6", 2, "2,6"},
      {"take a socket of cpus from dual socket with HT", "topoDualSocketHT", "0-11", 6,
       "0,2,4,6,8,10"},
      {"take a socket of cpus from dual socket with multi-numa-per-socket with HT",
       "topoDualSocketMultiNumaPerSocketHT", "0-79", 40, "0-19,40-59"},
      {"take a NUMA node of cpus from dual socket with multi-numa-per-socket with HT",
       "topoDualSocketMultiNumaPerSocketHT", "0-79", 20, "0-9,40-49"},
      {"take a NUMA node of cpus ..., with 1 NUMA node already taken",
       "topoDualSocketMultiNumaPerSocketHT", "10-39,50-79", 20, "10-19,50-59"},
      {"take a socket and a NUMA node of cpus from dual socket with multi-numa-per-socket",
       "topoDualSocketMultiNumaPerSocketHT", "0-79", 60, "0-29,40-69"},
      {"take a socket and a NUMA node of cpus ..., a core taken",
       "topoDualSocketMultiNumaPerSocketHT", "1-39,41-79", 60, "10-39,50-79"},
  };
  return kCases;
}

void ExpectTake(const TakeCase& tc, const absl::StatusOr<CpuSet>& got) {
  if (!tc.error.empty()) {
    ASSERT_FALSE(got.ok()) << tc.description;
    EXPECT_EQ(got.status().message(), tc.error) << tc.description;
    return;
  }
  ASSERT_TRUE(got.ok()) << tc.description << ": " << got.status();
  EXPECT_EQ(got->ToString(), Cpus(tc.expect).ToString()) << tc.description;
}

// Rule: packed allocator, full NUMA/socket/core passes then single CPUs.
TEST(TakePackedTest, KubeletCommonCases) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  for (const TakeCase& tc : CommonCases()) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    ExpectTake(tc, TakeByTopologyNumaPacked(*topo, Cpus(tc.available), tc.n,
                                            CpuSortingStrategy::kPacked, false));
  }
}

// Rule: packed allocator, kubelet's packed-only rows and the spec's worked examples.
TEST(TakePackedTest, KubeletPackedCases) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<TakeCase> cases = {
      {"take one cpu from dual socket with HT - core from Socket 0", "topoDualSocketHT", "1-5,7-11",
       1, "2"},
      {"allocate 4 full cores with 3 coming from the first NUMA node and 1 from the second",
       "topoDualSocketHT", "0-11", 8, "0,6,2,8,4,10,1,7"},
      {"allocate 32 full cores with 30 from the first 3 NUMA nodes and 2 from the fourth",
       "topoDualSocketMultiNumaPerSocketHT", "0-79", 64, "0-29,40-69,30,31,70,71"},
      {"spec 5.3: free 1-39,41-79, n=60 (socket 1 whole, then NUMA 1)",
       "topoDualSocketMultiNumaPerSocketHT", "1-39,41-79", 60, "10-39,50-79"},
      {"spec 5.3: 'not enough' counts only CPUs of the topology", "topoSingleSocketHT", "0-3,100",
       5, "", "not enough cpus available to satisfy request: requested=5, available=5"},
  };
  for (const TakeCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    ExpectTake(tc, TakeByTopologyNumaPacked(*topo, Cpus(tc.available), tc.n,
                                            CpuSortingStrategy::kPacked, false));
  }
}

// Rule: prefer-align-cpus-by-uncorecache (spec 5.4): full uncore caches, then a partial one
// of the lowest-id cores, before whole cores.
TEST(TakePackedTest, KubeletUncoreCases) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<TakeCase> cases = {
      {"take cpus from two full UncoreCaches and partial from a single UncoreCache",
       "topoUncoreSingleSocketNoSMT", "1-15", 10, "1,2,4-11"},
      {"take one cpu from dual socket with HT - core from Socket 0", "topoDualSocketHT", "1-5,7-11",
       1, "1"},
      {"take first available UncoreCache from first socket", "topoUncoreDualSocketNoSMT", "0-15", 4,
       "0-3"},
      {"take all available UncoreCache from first socket", "topoUncoreDualSocketNoSMT", "2-15", 6,
       "2-7"},
      {"take first available UncoreCache from second socket", "topoUncoreDualSocketNoSMT", "8-15",
       4, "8-11"},
      {"take first available UncoreCache from available NUMA", "topoUncoreSingleSocketMultiNuma",
       "3,4-8,12", 2, "4,5"},
      {"take cpus from best available UncoreCache group of multi uncore cache single socket - "
       "SMT enabled",
       "topoUncoreSingleSocketSMT", "2-3,10-11,4-7,12-15", 6, "4,5,6,12,13,14"},
      {"spec 5.4: odd request on SMT drops the highest CPU",
       "topoSingleSocketSingleNumaPerSocketSMTSmallUncore", "2-63,65-127", 3, "2,65,66"},
      {"spec 5.4: uncore 0 cannot hold 4 whole, uncore 1 fits",
       "topoSingleSocketSingleNumaPerSocketSMTSmallUncore", "2-63,65-127", 4, "4,5,68,69"},
      {"spec 5.4: uncore 1 whole, then 3 CPUs from uncore 0",
       "topoSingleSocketSingleNumaPerSocketSMTSmallUncore", "2-63,65-127", 11, "2,4-7,65-66,68-71"},
  };
  for (const TakeCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    ExpectTake(tc, TakeByTopologyNumaPacked(*topo, Cpus(tc.available), tc.n,
                                            CpuSortingStrategy::kPacked, true));
  }
}

// Rule: distribute-cpus-across-cores (spec 5.5): no whole-core pass, spread CPU order.
TEST(TakePackedTest, KubeletSpreadCases) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<TakeCase> cases = {
      {"single socket with HT, 3 cpus", "topoSingleSocketHT", "0-7", 3, "0-2"},
      {"dual socket with HT, 2 cpus", "topoDualSocketHT", "0-11", 2, "0,2"},
      {"dual socket with HT, 3 cpus", "topoDualSocketHT", "0-11", 3, "0,2,4"},
      {"dual socket with HT, 6 cpus", "topoDualSocketHT", "0-11", 6, "0,2,4,6,8,10"},
      {"dual socket with HT, 8 cpus", "topoDualSocketHT", "0-11", 8, "0,2,4,6,8,10,1,3"},
      {"dual socket without HT, 2 cpus", "topoDualSocketNoHT", "0-7", 2, "0,1"},
      {"dual socket with multi numa per socket and HT, 8 cpus",
       "topoDualSocketMultiNumaPerSocketHT", "0-79", 8, "0-7"},
  };
  for (const TakeCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    ExpectTake(tc, TakeByTopologyNumaPacked(*topo, Cpus(tc.available), tc.n,
                                            CpuSortingStrategy::kSpread, false));
  }
}

struct DistributedCase {
  TakeCase take;
  int group;
};

// Rule: distribute-cpus-across-numa (spec 7), cpuGroupSize 1 and 2.
TEST(TakeDistributedTest, KubeletCases) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  std::vector<DistributedCase> cases;
  for (const TakeCase& tc : CommonCases()) cases.push_back({tc, 1});
  const std::string multi = "topoDualSocketMultiNumaPerSocketHT";
  const std::vector<DistributedCase> own = {
      {{"allocate 4 full cores with 2 distributed across each NUMA node", "topoDualSocketHT",
        "0-11", 8, "0,6,2,8,1,7,3,9"},
       1},
      {{"allocate 32 full cores with 8 distributed across each NUMA node", multi, "0-79", 64,
        "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77"},
       1},
      {{"allocate 24 full cores with 8 distributed across the first 3 NUMA nodes", multi, "0-79",
        48, "0-7,10-17,20-27,40-47,50-57,60-67"},
       1},
      {{"allocate 24 full cores ... (taking all but 2 from the first NUMA node)", multi,
        "1-29,32-39,41-69,72-79", 48, "1-8,10-17,20-27,41-48,50-57,60-67"},
       1},
      {{"allocate 24 full cores ... across the last 3 NUMA nodes", multi, "2-29,31-39,42-69,71-79",
        48, "10-17,20-27,31-38,50-57,60-67,71-78"},
       1},
      {{"allocate 8 full cores with 2 distributed across each NUMA node", multi,
        "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71", 16,
        "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71"},
       1},
      {{"take one cpu from dual socket with HT - core from Socket 0", "topoDualSocketHT",
        "1-5,7-11", 1, "1"},
       1},
      {{"take one cpu from dual socket with HT - core from Socket 0 - cpuGroupSize 2",
        "topoDualSocketHT", "1-5,7-11", 1, "2"},
       2},
      {{"allocate 13 full cores distributed across the first 2 NUMA nodes", multi, "0-79", 26,
        "0-6,10-16,40-45,50-55"},
       1},
      {{"allocate 13 full cores distributed across the first 2 NUMA nodes (cpuGroupSize 2)", multi,
        "0-79", 26, "0-6,10-15,40-46,50-55"},
       2},
      {{"allocate 31 full cores, 15 per NUMA node and 1 spilling over to NUMA 0, 1", multi, "0-79",
        62, "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76"},
       1},
      {{"allocate 31 full cores, 14 per NUMA node and 2 spilling to NUMA 0, 1, 2 (group 2)", multi,
        "0-79", 62, "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76"},
       2},
      {{"allocate 31 full cores, 1 CPU spilling over to NUMA 2, 3 (to keep balance)", multi,
        "0-8,10-18,20-39,40-48,50-58,60-79", 62, "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77"},
       1},
      {{"allocate 31 full cores, 2 CPUs spilling to NUMA 0, 2, 3 (group 2)", multi,
        "0-8,10-18,20-39,40-48,50-58,60-79", 62, "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77"},
       2},
      {{"ensure bestRemainder chosen with NUMA nodes that have enough CPUs", multi,
        "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76", 34,
        "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74"},
       1},
      {{"ensure previous failure encountered on live machine has been fixed (1/1)",
        "topoDualSocketMultiNumaPerSocketHTLarge",
        "0,128,30,31,158,159,43-47,171-175,62,63,190,191,75-79,203-207,94,96,222,223,101-111,"
        "229-239,126,127,254,255",
        28, "43-47,75-79,96,101-105,171-174,203-206,229-232"},
       1},
  };
  cases.insert(cases.end(), own.begin(), own.end());
  for (const DistributedCase& dc : cases) {
    auto topo = KubeletTopology(dc.take.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    ExpectTake(dc.take, TakeByTopologyNumaDistributed(*topo, Cpus(dc.take.available), dc.take.n,
                                                      dc.group, CpuSortingStrategy::kPacked));
  }
}

// Spec 7: among equally balanced combinations the first one in iteration order wins. (kubelet's
// Go code can remember a later one instead: its combination slices share backing arrays.)
// 100 CPUs on 8 empty NUMA nodes of 32 need 4 nodes, and every 4-combination scores the same.
TEST(TakeDistributedTest, EqualScoresKeepTheFirstCombination) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  auto topo = KubeletTopology("topoDualSocketMultiNumaPerSocketHTLarge");
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->NumaNodes().size(), 8u);
  absl::StatusOr<CpuSet> taken =
      TakeByTopologyNumaDistributed(*topo, topo->Cpus(), 100, 1, CpuSortingStrategy::kPacked);
  ASSERT_TRUE(taken.ok()) << taken.status();
  for (const auto& [numa, cpus] : topo->NumaNodes()) {
    EXPECT_EQ(taken->Intersection(cpus).Size(), numa < 4 ? 25 : 0) << "NUMA node " << numa;
  }
}

}  // namespace
}  // namespace topologyd::cpu
