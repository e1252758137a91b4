// The `topoctl topology` JSON contract and the table view, on a hand-built model.
#include "lib/topology/topology_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::topology {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Topology Sample() {
  Topology topology;
  topology.packages = {Package{0, CpuSet::Range(0, 3)}, Package{1, CpuSet::Range(4, 7)}};
  topology.numa_nodes = {
      NumaNode{.id = 0,
               .cpus = CpuSet::Range(0, 3),
               .memory_bytes = 1073741824,
               .hugepages = {{2048, 16}, {1048576, 0}},
               .distances = {10, 21, 13}},
      NumaNode{.id = 1,
               .cpus = CpuSet::Range(4, 7),
               .memory_bytes = 2147483648,
               .distances = {21, 10, 23}},
      NumaNode{.id = 33,
               .cpus = {},
               .memory_bytes = 536870912,
               .distances = {13, 23, 10},
               .subtype = "HBM"},
  };
  for (int core = 0; core < 8; core += 2) {
    topology.cores.push_back(Core{core, core / 4, CpuSet{core, core + 1}});
  }
  for (int cpu = 0; cpu < 8; ++cpu) {
    topology.cpus.push_back(Cpu{cpu, cpu - cpu % 2, cpu / 4, -1, cpu / 4, cpu < 4 ? 0 : 4});
  }
  topology.l3_groups = {L3Group{0, CpuSet::Range(0, 3)}, L3Group{4, CpuSet::Range(4, 7)}};
  topology.pci_devices = {
      PciDevice{"0000:00:1f.2", 0x8086, 0xa182, 0x0106, DeviceKind::kStorage, {}, std::nullopt},
      PciDevice{"0000:3b:00.0", 0x10de, 0x1db4, 0x0302, DeviceKind::kGpu, {1}, std::nullopt},
      PciDevice{"0000:5e:00.0", 0x0000, 0x0000, 0x0000, DeviceKind::kOther, {0, 1}, std::nullopt},
  };
  return topology;
}

TEST(TopologyToJsonTest, ExactContractShape) {
  nlohmann::json expected = nlohmann::json::parse(R"json({
    "packages": 2, "cores": 4, "cpus": 8,
    "numa_nodes": [
      {"id": 0, "cpus": "0-3", "memory_bytes": 1073741824,
       "hugepages": [{"size_kib": 2048, "count": 16}, {"size_kib": 1048576, "count": 0}],
       "distances": [10, 21, 13]},
      {"id": 1, "cpus": "4-7", "memory_bytes": 2147483648, "hugepages": [],
       "distances": [21, 10, 23]},
      {"id": 33, "cpus": "", "memory_bytes": 536870912, "hugepages": [],
       "distances": [13, 23, 10]}],
    "l3_groups": ["0-3", "4-7"],
    "pci_devices": [
      {"busid": "0000:00:1f.2", "vendor_id": "8086", "device_id": "a182", "class_id": "0106",
       "kind": "storage", "numa_nodes": []},
      {"busid": "0000:3b:00.0", "vendor_id": "10de", "device_id": "1db4", "class_id": "0302",
       "kind": "gpu", "numa_nodes": [1]},
      {"busid": "0000:5e:00.0", "vendor_id": "0000", "device_id": "0000", "class_id": "0000",
       "kind": "other", "numa_nodes": [0, 1]}]
  })json");
  EXPECT_EQ(TopologyToJson(Sample()), expected) << TopologyToJson(Sample()).dump(2);
}

TEST(TopologyToJsonTest, UnknownDistancesAreEmptyArrays) {
  Topology topology = Sample();
  for (NumaNode& node : topology.numa_nodes) node.distances.clear();
  nlohmann::json json = TopologyToJson(topology);
  for (const auto& node : json["numa_nodes"]) {
    EXPECT_TRUE(node["distances"].is_array());
    EXPECT_TRUE(node["distances"].empty());
  }
}

TEST(TopologyToJsonTest, EveryKindIsSpelledAsTheContractSays) {
  Topology topology;
  topology.pci_devices = {
      PciDevice{.busid = "a", .kind = DeviceKind::kGpu},
      PciDevice{.busid = "b", .kind = DeviceKind::kNetwork},
      PciDevice{.busid = "c", .kind = DeviceKind::kStorage},
      PciDevice{.busid = "d", .kind = DeviceKind::kAccelerator},
      PciDevice{.busid = "e", .kind = DeviceKind::kOther},
  };
  nlohmann::json json = TopologyToJson(topology);
  std::vector<std::string> kinds;
  for (const auto& device : json["pci_devices"]) kinds.push_back(device["kind"]);
  EXPECT_THAT(kinds, ::testing::ElementsAre("gpu", "network", "storage", "accelerator", "other"));
  EXPECT_EQ(HexId(0xABCD), "abcd");
  EXPECT_EQ(HexId(0x12), "0012");
}

TEST(TopologyToTableTest, ShowsEachNodeWithItsDevices) {
  std::string table = TopologyToTable(Sample());
  EXPECT_THAT(table, HasSubstr("2 packages, 0 dies, 3 NUMA nodes, 4 cores, 8 CPUs, 2 L3 groups, "
                               "3 PCI devices\n"));
  EXPECT_THAT(table, HasSubstr("NUMA node 0\n  cpus       0-3\n  memory     1.0 GiB (1073741824 "
                               "bytes)\n  hugepages  2M x 16, 1G x 0\n  distances  0:10 1:21 "
                               "33:13\n  devices    0000:5e:00.0 other 0000:0000 class 0000\n"));
  EXPECT_THAT(table, HasSubstr("NUMA node 1\n  cpus       4-7\n"));
  EXPECT_THAT(table, HasSubstr("  devices    0000:3b:00.0 gpu 10de:1db4 class 0302\n"
                               "             0000:5e:00.0 other"));
  EXPECT_THAT(table, HasSubstr("NUMA node 33 (CPU-less) [HBM]\n  cpus       -\n  memory     512.0 "
                               "MiB (536870912 bytes)\n  hugepages  -\n"));
  EXPECT_THAT(table, HasSubstr("PCI devices without NUMA locality\n  0000:00:1f.2 storage"));
  EXPECT_THAT(table, Not(HasSubstr("CPUs in no NUMA node")));
  EXPECT_THAT(table, Not(HasSubstr("kubelet test map")));
}

TEST(TopologyToTableTest, ListsCpusOutsideEveryNodeAndUnknownDistances) {
  Topology topology = Sample();
  topology.numa_nodes[1].cpus = CpuSet{};
  for (NumaNode& node : topology.numa_nodes) node.distances.clear();
  topology.kubelet_test_map = true;
  std::string table = TopologyToTable(topology);
  EXPECT_THAT(table, HasSubstr("CPUs in no NUMA node: 4-7\n"));
  EXPECT_THAT(table, HasSubstr("distances  unknown\n"));
  EXPECT_THAT(table, HasSubstr("(kubelet test map)"));
}

}  // namespace
}  // namespace topologyd::topology
