// CpuTopology's per-CPU lookups against its map.
#include "lib/cpu/cpu_topology.h"

#include <map>

#include "gtest/gtest.h"

namespace topologyd::cpu {
namespace {

TEST(CpuTopologyTest, FindAnswersLikeTheMapForEveryId) {
  // Sparse ids, a gap at the start and between entries, as offline CPUs leave them.
  const std::map<int, CpuInfo> details = {
      {2, {.core_id = 2, .socket_id = 0, .numa_id = 0, .uncore_id = 0}},
      {3, {.core_id = 2, .socket_id = 0, .numa_id = 0, .uncore_id = 0}},
      {64, {.core_id = 64, .socket_id = 1, .numa_id = 1, .uncore_id = 1}},
      {130, {.core_id = 130, .socket_id = 1, .numa_id = 3, .uncore_id = 1}},
  };
  const CpuTopology topology({.num_cpus = 4, .num_cores = 3, .num_sockets = 2}, details);
  for (int cpu = -3; cpu <= 200; ++cpu) {
    auto it = details.find(cpu);
    const CpuInfo* found = topology.Find(cpu);
    if (it == details.end()) {
      EXPECT_EQ(found, nullptr) << cpu;
    } else {
      ASSERT_NE(found, nullptr) << cpu;
      EXPECT_EQ(*found, it->second) << cpu;
      EXPECT_EQ(topology.At(cpu), it->second) << cpu;
    }
  }
}

TEST(CpuTopologyTest, NegativeIdsOfAHandBuiltMapAreStillFound) {
  const CpuInfo info{.core_id = 7, .socket_id = 1, .numa_id = 1, .uncore_id = 0};
  const CpuTopology topology({.num_cpus = 2}, {{-1, info}, {0, CpuInfo{}}});
  ASSERT_NE(topology.Find(-1), nullptr);
  EXPECT_EQ(*topology.Find(-1), info);
  EXPECT_EQ(topology.At(0), CpuInfo{});
  EXPECT_EQ(topology.Find(1), nullptr);

  const CpuTopology only_negative({.num_cpus = 1}, {{-5, info}});
  EXPECT_EQ(only_negative.At(-5), info);
  EXPECT_EQ(only_negative.Find(0), nullptr);
}

TEST(CpuTopologyTest, CopiesKeepTheirOwnLookups) {
  CpuTopology copy;
  {
    const CpuTopology original({.num_cpus = 1}, {{5, {.core_id = 5, .socket_id = 0}}});
    copy = original;
  }
  ASSERT_NE(copy.Find(5), nullptr);
  EXPECT_EQ(copy.Find(5)->core_id, 5);
}

}  // namespace
}  // namespace topologyd::cpu
