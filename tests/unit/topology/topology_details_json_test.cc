// The detailed topology document (`topoctl topology --details`) and the model read back from it.
#include "lib/topology/topology_details_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::topology {
namespace {

using ::testing::HasSubstr;

// Two packages of two dies, one NUMA node and one L3 per package, two CPUs per core, sparse
// NUMA ids, a CPU-less node and two devices.
Topology Machine() {
  Topology t;
  t.packages = {Package{0, CpuSet::Range(0, 7)}, Package{1, CpuSet::Range(8, 15)}};
  for (int p = 0; p < 2; ++p) {
    for (int d = 0; d < 2; ++d)
      t.dies.push_back(Die{d, p, CpuSet::Range(p * 8 + d * 4, p * 8 + d * 4 + 3)});
  }
  t.numa_nodes = {
      NumaNode{.id = 0,
               .cpus = CpuSet::Range(0, 7),
               .memory_bytes = 1 << 30,
               .hugepages = {{2048, 8}},
               .distances = {10, 20, 30}},
      NumaNode{.id = 2,
               .cpus = CpuSet::Range(8, 15),
               .memory_bytes = 2u << 30,
               .hugepages = {{2048, 0}},
               .distances = {20, 10, 30}},
      NumaNode{.id = 5, .cpus = {}, .memory_bytes = 1 << 20, .distances = {30, 30, 10}},
  };
  for (int core = 0; core < 16; core += 2)
    t.cores.push_back(Core{core, core / 8, CpuSet{core, core + 1}});
  for (int cpu = 0; cpu < 16; ++cpu) {
    t.cpus.push_back(
        Cpu{cpu, cpu - cpu % 2, cpu / 8, (cpu % 8) / 4, cpu < 8 ? 0 : 2, cpu < 8 ? 0 : 8});
  }
  t.l3_groups = {L3Group{0, CpuSet::Range(0, 7)}, L3Group{8, CpuSet::Range(8, 15)}};
  t.pci_devices = {
      PciDevice{"0000:3b:00.0", 0x10de, 0x1db4, 0x0302, DeviceKind::kGpu, {2}, std::nullopt},
      PciDevice{"0000:5e:00.0", 0x15b3, 0x1019, 0x0207, DeviceKind::kNetwork, {}, std::nullopt},
  };
  return t;
}

TEST(TopologyDetailsJsonTest, ReadsBackTheModel) {
  const Topology machine = Machine();
  const nlohmann::json document = TopologyDetailsToJson(machine);
  EXPECT_EQ(
      document["cpu_details"][9],
      nlohmann::json::parse(R"({"id": 9, "core": 8, "package": 1, "die": 0, "numa": 2, "l3": 8})"));
  EXPECT_EQ(document["kubelet_test_map"], false);
  absl::StatusOr<Topology> read = TopologyFromDetailsJson(document);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, machine);
}

TEST(TopologyDetailsJsonTest, RefusesCpusThatDisagreeWithTheirNode) {
  nlohmann::json document = TopologyDetailsToJson(Machine());
  document["cpu_details"][3]["numa"] = 2;
  absl::StatusOr<Topology> read = TopologyFromDetailsJson(document);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("cpu_details (CPU 3)"));
}

TEST(TopologyDetailsJsonTest, RefusesTheDocumentWithoutDetails) {
  nlohmann::json document = TopologyDetailsToJson(Machine());
  document.erase("cpu_details");
  absl::StatusOr<Topology> read = TopologyFromDetailsJson(document);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("cpu_details: missing"));
  document = TopologyDetailsToJson(Machine());
  document["cores"] = 9;
  EXPECT_THAT(TopologyFromDetailsJson(document).status().message(),
              HasSubstr("cores: 9 given, 8 in cpu_details"));
}

}  // namespace
}  // namespace topologyd::topology
