// kubelet's accumulator orderings and bookkeeping (docs/cpu-policy.md, "How CPUs are chosen"),
// transcribed from kubelet's cpu_assignment_test.go (TestCPUAccumulatorFree*,
// TestCPUAccumulatorTake).
#include "lib/cpu/cpu_accumulator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "tests/unit/cpu/kubelet_topologies.h"

namespace topologyd::cpu {
namespace {

using testing::Cpus;
using testing::KubeletTopology;

struct OrderCase {
  std::string description;
  std::string topology;
  std::string available;
  std::vector<int> expect;
};

CpuAccumulator MakeAcc(const CpuTopology& topo, const std::string& available, int n = 0) {
  return CpuAccumulator(topo, Cpus(available), n, CpuSortingStrategy::kPacked);
}

// Rule: a socket is free when all CPUsPerSocket of its CPUs are free (order irrelevant here).
TEST(CpuAccumulatorTest, FreeSockets) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<OrderCase> cases = {
      {"single socket HT, 1 socket free", "topoSingleSocketHT", "0-7", {0}},
      {"single socket HT, 0 sockets free", "topoSingleSocketHT", "1-7", {}},
      {"dual socket HT, 2 sockets free", "topoDualSocketHT", "0-11", {0, 1}},
      {"dual socket HT, 1 socket free", "topoDualSocketHT", "0-9,11", {1}},
      {"dual socket HT, 0 sockets free", "topoDualSocketHT", "0,2-9,11", {}},
      {"multi numa per socket, 2 sockets free",
       "topoDualSocketMultiNumaPerSocketHT",
       "0-79",
       {0, 1}},
      {"multi numa per socket, 1 socket free", "topoDualSocketMultiNumaPerSocketHT", "1-79", {1}},
      {"multi numa per socket, 0 sockets free", "topoDualSocketMultiNumaPerSocketHT", "1-78", {}},
      {"multi socket per numa, 4 sockets free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "0-79",
       {0, 1, 2, 3}},
      {"multi socket per numa, 3 sockets free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "0-19,21-79",
       {0, 1, 3}},
      {"multi socket per numa, 2 sockets free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "0-59,61-78",
       {0, 1}},
      {"multi socket per numa, 1 socket free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "1-19,21-38,41-60,61-78",
       {1}},
      {"multi socket per numa, 0 sockets free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "0-40,42-49,51-68,71-79",
       {}},
  };
  for (const OrderCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    std::vector<int> got = MakeAcc(*topo, tc.available).FreeSockets();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, tc.expect) << tc.description;
  }
}

// Rule: a NUMA node is free when all its CPUs are free; ascending by free CPUs, then id.
TEST(CpuAccumulatorTest, FreeNumaNodes) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<OrderCase> cases = {
      {"single socket HT, 1 NUMA node free", "topoSingleSocketHT", "0-7", {0}},
      {"single socket HT, 0 NUMA node free", "topoSingleSocketHT", "1-7", {}},
      {"dual socket HT, 2 NUMA node free", "topoDualSocketHT", "0-11", {0, 1}},
      {"dual socket HT, 1 NUMA node free", "topoDualSocketHT", "0-9,11", {1}},
      {"dual socket HT, 0 NUMA node free", "topoDualSocketHT", "0,2-9,11", {}},
      {"multi numa per socket, 4 free", "topoDualSocketMultiNumaPerSocketHT", "0-79", {0, 1, 2, 3}},
      {"multi numa per socket, 3 free", "topoDualSocketMultiNumaPerSocketHT", "1-79", {1, 2, 3}},
      {"multi numa per socket, 2 free", "topoDualSocketMultiNumaPerSocketHT", "1-9,11-79", {2, 3}},
      {"multi numa per socket, 1 free",
       "topoDualSocketMultiNumaPerSocketHT",
       "1-9,11-59,61-79",
       {3}},
      {"multi numa per socket, 0 free",
       "topoDualSocketMultiNumaPerSocketHT",
       "1-9,11-59,61-78",
       {}},
      {"multi socket per numa, 2 free", "fakeTopoMultiSocketDualSocketPerNumaHT", "0-79", {0, 1}},
      {"multi socket per numa, 1 free", "fakeTopoMultiSocketDualSocketPerNumaHT", "0-9,11-79", {1}},
      {"multi socket per numa, 0 free",
       "fakeTopoMultiSocketDualSocketPerNumaHT",
       "0-9,11-59,61-79",
       {}},
  };
  for (const OrderCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    EXPECT_EQ(MakeAcc(*topo, tc.available).FreeNumaNodes(), tc.expect) << tc.description;
  }
}

// Rule: sockets-first ordering (several NUMA nodes per socket) for both free lists.
TEST(CpuAccumulatorTest, FreeSocketsAndNumaNodesSocketsFirst) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  struct Case {
    std::string available;
    std::vector<int> sockets;
    std::vector<int> numas;
  };
  const std::vector<Case> cases = {
      {"0-79", {0, 1}, {0, 1, 2, 3}},
      {"1-79", {1}, {1, 2, 3}},
      {"1-9,11-79", {1}, {2, 3}},
      {"1-59,61-79", {}, {1, 3}},
  };
  auto topo = KubeletTopology("topoDualSocketMultiNumaPerSocketHT");
  ASSERT_TRUE(topo.ok()) << topo.status();
  for (const Case& tc : cases) {
    CpuAccumulator acc = MakeAcc(*topo, tc.available);
    EXPECT_FALSE(acc.numa_first());
    EXPECT_EQ(acc.FreeNumaNodes(), tc.numas) << tc.available;
    EXPECT_EQ(acc.FreeSockets(), tc.sockets) << tc.available;
  }
}

// Rule: a core is free when CPUsPerCore of its CPUs are free; cores ordered socket by socket.
TEST(CpuAccumulatorTest, FreeCores) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<OrderCase> cases = {
      {"single socket HT, 4 cores free", "topoSingleSocketHT", "0-7", {0, 1, 2, 3}},
      {"single socket HT, 3 cores free", "topoSingleSocketHT", "0-2,4-6", {0, 1, 2}},
      {"single socket HT, 3 cores free (1 partially consumed)",
       "topoSingleSocketHT",
       "0-6",
       {0, 1, 2}},
      {"single socket HT, 0 cores free", "topoSingleSocketHT", "", {}},
      {"single socket HT, 0 cores free (4 partially consumed)", "topoSingleSocketHT", "0-3", {}},
      {"dual socket HT, 6 cores free", "topoDualSocketHT", "0-11", {0, 2, 4, 1, 3, 5}},
      {"dual socket HT, 5 cores free (1 consumed from socket 0)",
       "topoDualSocketHT",
       "1-5,7-11",
       {2, 4, 1, 3, 5}},
      {"dual socket HT, 4 cores free (1 consumed from each socket)",
       "topoDualSocketHT",
       "2-5,8-11",
       {2, 4, 3, 5}},
  };
  for (const OrderCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    EXPECT_EQ(MakeAcc(*topo, tc.available).FreeCores(), tc.expect) << tc.description;
  }
}

// Rule: packed single-CPU order: cores in core order, each core's free CPUs ascending.
TEST(CpuAccumulatorTest, PackedCpuOrder) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::vector<OrderCase> cases = {
      {"single socket HT, 8 cpus free", "topoSingleSocketHT", "0-7", {0, 4, 1, 5, 2, 6, 3, 7}},
      {"single socket HT, 5 cpus free", "topoSingleSocketHT", "3-7", {4, 5, 6, 3, 7}},
      {"dual socket HT, 12 cpus free",
       "topoDualSocketHT",
       "0-11",
       {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11}},
      {"dual socket HT, 11 cpus free",
       "topoDualSocketHT",
       "1-11",
       {6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11}},
      {"dual socket HT, 10 cpus free",
       "topoDualSocketHT",
       "1-5,7-11",
       {2, 8, 4, 10, 1, 7, 3, 9, 5, 11}},
      {"triple socket HT, 12 cpus free",
       "topoTripleSocketHT",
       "0-3,6-13",
       {12, 13, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11}},
  };
  for (const OrderCase& tc : cases) {
    auto topo = KubeletTopology(tc.topology);
    ASSERT_TRUE(topo.ok()) << topo.status();
    EXPECT_EQ(MakeAcc(*topo, tc.available).SortedCpus(), tc.expect) << tc.description;
  }
}

// Rule: take() lowers the need by |S|; satisfied = need < 1; failed = need > free CPUs.
TEST(CpuAccumulatorTest, Take) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  struct Case {
    std::string description;
    std::string available;
    std::vector<std::string> takes;
    int n;
    bool satisfied;
    bool failed;
  };
  const std::vector<Case> cases = {
      {"take 0 cpus, require 1", "0-7", {""}, 1, false, false},
      {"take 0 cpus, require 1, none available", "", {""}, 1, false, true},
      {"take 1 cpu, require 1", "0-7", {"0"}, 1, true, false},
      {"take 1 cpu, require 2", "0-7", {"0"}, 2, false, false},
      {"take 2 cpus, require 4, expect failed", "0-2", {"0", "1"}, 4, false, true},
      {"take all cpus one at a time, require 8",
       "0-7",
       {"0", "1", "2", "3", "4", "5", "6", "7"},
       8,
       true,
       false},
  };
  auto topo = KubeletTopology("topoSingleSocketHT");
  ASSERT_TRUE(topo.ok()) << topo.status();
  for (const Case& tc : cases) {
    CpuAccumulator acc = MakeAcc(*topo, tc.available, tc.n);
    int taken = 0;
    for (const std::string& t : tc.takes) {
      acc.Take(Cpus(t));
      taken += Cpus(t).Size();
    }
    EXPECT_EQ(acc.IsSatisfied(), tc.satisfied) << tc.description;
    EXPECT_EQ(acc.IsFailed(), tc.failed) << tc.description;
    EXPECT_EQ(acc.need(), tc.n - taken) << tc.description;
    for (const std::string& t : tc.takes) {
      EXPECT_TRUE(Cpus(t).IsSubsetOf(acc.result())) << tc.description;
      EXPECT_FALSE(Cpus(t).Intersects(acc.free_cpus())) << tc.description;
    }
  }
}

}  // namespace
}  // namespace topologyd::cpu
