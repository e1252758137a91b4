// Rules of the model on hand-written machines: no hwloc involved.
#include "lib/topology/topology_builder.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int kNone = ObjectDescription::kUnknownIndex;

ObjectDescription Obj(int os_index, CpuSet cpus) { return ObjectDescription{os_index, cpus}; }

NumaDescription Numa(int os_index, CpuSet cpus, uint64_t memory = uint64_t{1} << 30) {
  NumaDescription node;
  node.os_index = os_index;
  node.cpus = cpus;
  node.memory_bytes = memory;
  return node;
}

// One package, cores of `smt` consecutive CPUs, one NUMA node.
MachineDescription Simple(int cpus, int smt) {
  MachineDescription machine;
  machine.pus = CpuSet::Range(0, cpus - 1);
  machine.packages = {Obj(0, machine.pus)};
  for (int first = 0; first < cpus; first += smt) {
    machine.cores.push_back(Obj(first / smt, CpuSet::Range(first, first + smt - 1)));
  }
  machine.numa_nodes = {Numa(0, machine.pus)};
  return machine;
}

Topology Build(const MachineDescription& machine) {
  absl::StatusOr<Topology> topology = BuildTopology(machine);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? *topology : Topology{};
}

TEST(BuildTopologyTest, MemoryOnlyNodeWithTheSameCpusetComesOutCpuLess) {
  // Xeon Max / KNL flat mode: the HBM node hangs off the package and repeats its cpuset.
  MachineDescription machine = Simple(4, 1);
  machine.numa_nodes = {Numa(8, CpuSet::Range(0, 3), uint64_t{16} << 30),
                        Numa(0, CpuSet::Range(0, 3))};
  machine.numa_nodes[0].subtype = "HBM";
  Topology topology = Build(machine);
  ASSERT_EQ(topology.numa_nodes.size(), 2u);
  EXPECT_EQ(topology.numa_nodes[0].id, 0);
  EXPECT_EQ(topology.numa_nodes[0].cpus, CpuSet::Range(0, 3));
  EXPECT_EQ(topology.numa_nodes[1].id, 8);
  EXPECT_TRUE(topology.numa_nodes[1].cpus.IsEmpty());
  EXPECT_EQ(topology.numa_nodes[1].memory_bytes, uint64_t{16} << 30);
  EXPECT_EQ(topology.numa_nodes[1].subtype, "HBM");
  for (const Cpu& cpu : topology.cpus) EXPECT_EQ(cpu.numa_id, 0) << cpu.id;
}

TEST(BuildTopologyTest, CpuGoesToTheSmallestContainingNode) {
  // A node attached at machine level (cpuset = everything) next to a per-package node.
  MachineDescription machine = Simple(8, 1);
  machine.numa_nodes = {Numa(0, CpuSet::Range(0, 7)), Numa(1, CpuSet::Range(4, 7))};
  Topology topology = Build(machine);
  EXPECT_EQ(topology.numa_nodes[0].cpus, CpuSet::Range(0, 3));
  EXPECT_EQ(topology.numa_nodes[1].cpus, CpuSet::Range(4, 7));
  EXPECT_EQ(topology.FindCpu(5)->numa_id, 1);
  EXPECT_EQ(topology.FindCpu(2)->numa_id, 0);
}

TEST(BuildTopologyTest, EqualCpusetsGoToTheLowestOsIndexWhateverTheListOrder) {
  MachineDescription machine = Simple(4, 1);
  machine.numa_nodes = {Numa(5, CpuSet::Range(0, 3)), Numa(2, CpuSet::Range(0, 3))};
  Topology topology = Build(machine);
  EXPECT_EQ(topology.FindNuma(2)->cpus, CpuSet::Range(0, 3));
  EXPECT_TRUE(topology.FindNuma(5)->cpus.IsEmpty());
}

TEST(BuildTopologyTest, CpusOfMemorylessDiesBelongToNoNode) {
  MachineDescription machine = Simple(8, 1);
  machine.numa_nodes = {Numa(0, CpuSet::Range(0, 1)), Numa(2, CpuSet::Range(4, 5))};
  Topology topology = Build(machine);
  EXPECT_EQ(topology.FindCpu(2)->numa_id, -1);
  EXPECT_EQ(topology.FindCpu(7)->numa_id, -1);
  EXPECT_EQ(topology.FindCpu(4)->numa_id, 2);
  EXPECT_EQ(topology.cpus.size(), 8u);
}

TEST(BuildTopologyTest, SparseNumaIdsKeepTheirIdsAndDistanceColumns) {
  MachineDescription machine = Simple(8, 1);
  machine.numa_nodes = {Numa(33, CpuSet{4, 5}), Numa(0, CpuSet{0, 1}), Numa(2, CpuSet{2, 3}),
                        Numa(72, CpuSet{6, 7})};
  // The matrix arrives in another order than the sorted node list.
  machine.distance_node_ids = {72, 33, 2, 0};
  machine.distance_values = {10, 16, 22, 23,  //
                             16, 10, 17, 18,  //
                             22, 17, 10, 11,  //
                             23, 18, 11, 10};
  Topology topology = Build(machine);
  std::vector<int> ids;
  for (const NumaNode& node : topology.numa_nodes) ids.push_back(node.id);
  EXPECT_THAT(ids, ElementsAre(0, 2, 33, 72));
  EXPECT_EQ(topology.FindNuma(33), &topology.numa_nodes[2]);  // column 2 of the distances
  EXPECT_EQ(topology.FindNuma(3), nullptr);
  EXPECT_EQ(topology.FindNuma(7), nullptr);
  EXPECT_THAT(topology.FindNuma(0)->distances, ElementsAre(10, 11, 18, 23));
  EXPECT_THAT(topology.FindNuma(72)->distances, ElementsAre(23, 22, 16, 10));
  EXPECT_EQ(topology.Distance(33, 2), 17u);
  EXPECT_EQ(topology.Distance(33, 1), std::nullopt);
}

TEST(BuildTopologyTest, DistanceMatrixMissingANodeMeansUnknownForAll) {
  MachineDescription machine = Simple(4, 1);
  machine.numa_nodes = {Numa(0, CpuSet{0, 1}), Numa(1, CpuSet{2, 3}), Numa(16, CpuSet{})};
  machine.distance_node_ids = {0, 1};
  machine.distance_values = {10, 20, 20, 10};
  Topology topology = Build(machine);
  for (const NumaNode& node : topology.numa_nodes) EXPECT_THAT(node.distances, IsEmpty());
  EXPECT_EQ(topology.Distance(0, 1), std::nullopt);
}

TEST(BuildTopologyTest, MalformedDistanceMatrixIsAnError) {
  MachineDescription machine = Simple(4, 1);
  machine.distance_node_ids = {0};
  machine.distance_values = {10, 20};
  EXPECT_EQ(BuildTopology(machine).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildTopologyTest, InterleavedCpuIdsAcrossSockets) {
  // Even ids on package 0, odd ids on package 1, SMT siblings 8 apart.
  MachineDescription machine;
  machine.pus = CpuSet::Range(0, 15);
  CpuSet even, odd;
  for (int cpu = 0; cpu < 16; ++cpu) (cpu % 2 == 0 ? even : odd).Add(cpu);
  machine.packages = {Obj(1, odd), Obj(0, even)};
  for (int cpu = 0; cpu < 8; ++cpu) machine.cores.push_back(Obj(cpu / 2, CpuSet{cpu, cpu + 8}));
  machine.numa_nodes = {Numa(0, even), Numa(1, odd)};
  Topology topology = Build(machine);
  ASSERT_EQ(topology.packages.size(), 2u);
  EXPECT_EQ(topology.packages[0].id, 0);
  EXPECT_EQ(topology.packages[0].cpus, even);
  for (const Cpu& cpu : topology.cpus) {
    EXPECT_EQ(cpu.package_id, cpu.id % 2) << cpu.id;
    EXPECT_EQ(cpu.numa_id, cpu.id % 2) << cpu.id;
    EXPECT_EQ(cpu.core_id, cpu.id % 8) << cpu.id;  // the lowest CPU of {c, c+8}
  }
  ASSERT_EQ(topology.cores.size(), 8u);
  EXPECT_EQ(topology.cores[3].id, 3);
  EXPECT_EQ(topology.cores[3].package_id, 1);
  EXPECT_EQ(topology.cores[3].cpus, (CpuSet{3, 11}));
}

TEST(BuildTopologyTest, RealCoreIdIsTheLowestCpuNotTheOsIndex) {
  // Linux core_id restarts per package; kubelet uses the lowest thread id instead.
  MachineDescription machine;
  machine.pus = CpuSet::Range(0, 3);
  machine.packages = {Obj(0, CpuSet{0, 1}), Obj(1, CpuSet{2, 3})};
  machine.cores = {Obj(0, CpuSet{0, 1}), Obj(0, CpuSet{2, 3})};
  machine.numa_nodes = {Numa(0, machine.pus)};
  Topology topology = Build(machine);
  ASSERT_EQ(topology.cores.size(), 2u);
  EXPECT_EQ(topology.cores[0].id, 0);
  EXPECT_EQ(topology.cores[1].id, 2);
  EXPECT_EQ(topology.FindCpu(3)->core_id, 2);
  EXPECT_FALSE(topology.kubelet_test_map);
}

TEST(BuildTopologyTest, KubeletTestMapUsesCoreOsIndexEvenWhenReusedAcrossPackages) {
  MachineDescription machine;
  machine.kubelet_test_map = true;
  machine.pus = CpuSet::Range(0, 3);
  machine.packages = {Obj(0, CpuSet{0, 1}), Obj(1, CpuSet{2, 3})};
  machine.cores = {Obj(0, CpuSet{0}), Obj(1, CpuSet{1}), Obj(0, CpuSet{2}), Obj(1, CpuSet{3})};
  machine.numa_nodes = {Numa(0, machine.pus)};
  Topology topology = Build(machine);
  EXPECT_TRUE(topology.kubelet_test_map);
  ASSERT_EQ(topology.cores.size(), 4u);  // one entry per hwloc Core, as kubelet's NumCores
  EXPECT_EQ(topology.cores[0].id, 0);
  EXPECT_EQ(topology.cores[0].package_id, 0);
  EXPECT_EQ(topology.cores[1].id, 0);
  EXPECT_EQ(topology.cores[1].package_id, 1);
  EXPECT_EQ(topology.FindCpu(2)->core_id, 0);
  EXPECT_EQ(topology.FindCpu(3)->core_id, 1);
}

TEST(BuildTopologyTest, PusOutsideEveryCoreAreTheirOwnCores) {
  MachineDescription machine = Simple(4, 1);
  machine.cores.clear();
  Topology topology = Build(machine);
  ASSERT_EQ(topology.cores.size(), 4u);
  for (const Core& core : topology.cores) EXPECT_EQ(core.cpus, CpuSet{core.id});
}

TEST(BuildTopologyTest, NoPackageLevelMeansOnePackageZero) {
  MachineDescription machine = Simple(4, 2);
  machine.packages.clear();
  Topology topology = Build(machine);
  ASSERT_EQ(topology.packages.size(), 1u);
  EXPECT_EQ(topology.packages[0].id, 0);
  EXPECT_EQ(topology.packages[0].cpus, CpuSet::Range(0, 3));
}

TEST(BuildTopologyTest, InconsistentMachinesAreErrors) {
  MachineDescription orphan = Simple(4, 1);
  orphan.packages = {Obj(0, CpuSet{0, 1, 2})};
  EXPECT_THAT(BuildTopology(orphan).status().message(), HasSubstr("CPUs 3 belong to no package"));

  MachineDescription overlap = Simple(4, 1);
  overlap.packages = {Obj(0, CpuSet{0, 1, 2}), Obj(1, CpuSet{2, 3})};
  EXPECT_EQ(BuildTopology(overlap).status().code(), absl::StatusCode::kInvalidArgument);

  MachineDescription duplicate_numa = Simple(4, 1);
  duplicate_numa.numa_nodes = {Numa(1, CpuSet{0, 1}), Numa(1, CpuSet{2, 3})};
  EXPECT_THAT(BuildTopology(duplicate_numa).status().message(), HasSubstr("duplicate NUMA"));

  MachineDescription empty;
  EXPECT_EQ(BuildTopology(empty).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildTopologyTest, L3IdsAreOsIndexesWhenAllDistinct) {
  MachineDescription machine = Simple(8, 1);
  machine.l3_caches = {Obj(7, CpuSet::Range(4, 7)), Obj(3, CpuSet::Range(0, 3))};
  Topology topology = Build(machine);
  ASSERT_EQ(topology.l3_groups.size(), 2u);
  EXPECT_EQ(topology.l3_groups[0].id, 3);
  EXPECT_EQ(topology.l3_groups[0].cpus, CpuSet::Range(0, 3));
  EXPECT_EQ(topology.FindCpu(5)->l3_id, 7);
}

TEST(BuildTopologyTest, L3IdsFallBackToLowestCpuWhenAnyOsIndexIsMissingOrRepeated) {
  MachineDescription missing = Simple(8, 1);
  missing.l3_caches = {Obj(0, CpuSet::Range(0, 3)), Obj(kNone, CpuSet::Range(4, 7))};
  Topology topology = Build(missing);
  EXPECT_EQ(topology.l3_groups[0].id, 0);
  EXPECT_EQ(topology.l3_groups[1].id, 4);
  EXPECT_EQ(topology.FindCpu(6)->l3_id, 4);

  MachineDescription repeated = Simple(8, 1);
  repeated.l3_caches = {Obj(1, CpuSet::Range(0, 3)), Obj(1, CpuSet::Range(4, 7))};
  Topology again = Build(repeated);
  EXPECT_EQ(again.l3_groups[0].id, 0);
  EXPECT_EQ(again.l3_groups[1].id, 4);
}

TEST(BuildTopologyTest, NoL3MeansNoUncoreIdExceptOnKubeletTestMaps) {
  MachineDescription machine = Simple(4, 2);
  Topology real = Build(machine);
  EXPECT_THAT(real.l3_groups, IsEmpty());
  for (const Cpu& cpu : real.cpus) EXPECT_EQ(cpu.l3_id, -1);

  machine.kubelet_test_map = true;
  Topology kubelet = Build(machine);
  EXPECT_THAT(kubelet.l3_groups, IsEmpty());
  for (const Cpu& cpu : kubelet.cpus) EXPECT_EQ(cpu.l3_id, 0);
}

TEST(BuildTopologyTest, HugePagesDropTheBasePageAndSortBySize) {
  MachineDescription machine = Simple(2, 1);
  machine.numa_nodes[0].page_types = {
      {1u << 30, 4}, {4096, 1000}, {2u << 20, 512}, {0, 7}, {4096, 5}};
  Topology topology = Build(machine);
  EXPECT_THAT(topology.numa_nodes[0].hugepages,
              ElementsAre(HugePages{2048, 512}, HugePages{1048576, 4}));

  // POWER and ThunderX2 run 64 KiB base pages: 64K is then not a huge page size.
  machine.numa_nodes[0].page_types = {{65536, 0}, {2u << 20, 0}, {512u << 20, 3}};
  EXPECT_THAT(Build(machine).numa_nodes[0].hugepages,
              ElementsAre(HugePages{2048, 0}, HugePages{524288, 3}));

  machine.numa_nodes[0].page_types = {{4096, 100}};
  EXPECT_THAT(Build(machine).numa_nodes[0].hugepages, IsEmpty());
}

TEST(BuildTopologyTest, DiesKeepTheirPackage) {
  MachineDescription machine = Simple(8, 1);
  machine.packages = {Obj(0, CpuSet::Range(0, 3)), Obj(1, CpuSet::Range(4, 7))};
  machine.dies = {Obj(0, CpuSet{0, 1}), Obj(1, CpuSet{2, 3}), Obj(0, CpuSet{4, 5}),
                  Obj(1, CpuSet{6, 7})};
  Topology topology = Build(machine);
  ASSERT_EQ(topology.dies.size(), 4u);
  EXPECT_EQ(topology.dies[2].package_id, 1);
  EXPECT_EQ(topology.dies[2].id, 0);
  EXPECT_EQ(topology.FindCpu(7)->die_id, 1);
  EXPECT_EQ(Build(Simple(2, 1)).cpus[0].die_id, -1);
}

PciDescription Pci(std::string busid, uint16_t class_id, CpuSet locality, bool at_root = false) {
  PciDescription device;
  device.busid = std::move(busid);
  device.vendor_id = 0x10de;
  device.device_id = 0x1db4;
  device.class_id = class_id;
  device.locality = locality;
  device.attached_to_root = at_root;
  return device;
}

TEST(BuildTopologyTest, PciLocalityIsTheCpuNodesItsAncestorCovers) {
  MachineDescription machine = Simple(8, 1);
  machine.numa_nodes = {Numa(0, CpuSet::Range(0, 3)), Numa(1, CpuSet::Range(4, 7)),
                        Numa(9, CpuSet::Range(4, 7))};  // HBM beside node 1
  machine.pci_devices = {Pci("0000:b1:00.0", 0x0207, CpuSet::Range(4, 7)),
                         Pci("0000:3b:00.0", 0x0302, CpuSet::Range(0, 7)),
                         Pci("0000:00:1f.2", 0x0106, CpuSet::Range(0, 7), /*at_root=*/true)};
  Topology topology = Build(machine);
  ASSERT_EQ(topology.pci_devices.size(), 3u);
  EXPECT_EQ(topology.pci_devices[0].busid, "0000:00:1f.2");
  EXPECT_THAT(topology.pci_devices[0].numa_nodes, IsEmpty());  // no locality from firmware
  EXPECT_EQ(topology.pci_devices[0].kind, DeviceKind::kStorage);
  EXPECT_EQ(topology.pci_devices[1].busid, "0000:3b:00.0");
  EXPECT_THAT(topology.pci_devices[1].numa_nodes, ElementsAre(0, 1));
  EXPECT_EQ(topology.pci_devices[1].kind, DeviceKind::kGpu);
  EXPECT_THAT(topology.pci_devices[2].numa_nodes, ElementsAre(1));  // not the CPU-less 9
  EXPECT_EQ(topology.pci_devices[2].kind, DeviceKind::kNetwork);
  EXPECT_EQ(topology.pci_devices[2].physfn_busid, std::nullopt);
}

TEST(BuildTopologyTest, VirtualFunctionKeepsItsPhysicalFunction) {
  MachineDescription machine = Simple(4, 1);
  machine.pci_devices = {Pci("0000:3b:00.0", 0x0200, CpuSet::Range(0, 3)),
                         Pci("0000:3b:02.1", 0x0200, CpuSet::Range(0, 3))};
  machine.pci_devices[1].physfn_busid = "0000:3b:00.0";
  Topology topology = Build(machine);
  ASSERT_EQ(topology.pci_devices.size(), 2u);
  EXPECT_EQ(topology.pci_devices[0].physfn_busid, std::nullopt);
  EXPECT_EQ(topology.pci_devices[1].physfn_busid, "0000:3b:00.0");
}

TEST(BuildTopologyTest, RootAttachedDeviceOnASingleNodeMachineIsLocalToIt) {
  MachineDescription machine = Simple(4, 1);
  machine.pci_devices = {Pci("0000:00:02.0", 0x0300, CpuSet::Range(0, 3), /*at_root=*/true)};
  EXPECT_THAT(Build(machine).pci_devices[0].numa_nodes, ElementsAre(0));
}

TEST(ClassifyPciDeviceTest, CoarseKinds) {
  EXPECT_EQ(ClassifyPciDevice(0x0300, false), DeviceKind::kGpu);
  EXPECT_EQ(ClassifyPciDevice(0x0302, false), DeviceKind::kGpu);
  EXPECT_EQ(ClassifyPciDevice(0x0380, false), DeviceKind::kGpu);
  EXPECT_EQ(ClassifyPciDevice(0x1200, true), DeviceKind::kGpu);  // MI300A with a GPU osdev
  EXPECT_EQ(ClassifyPciDevice(0x1200, false), DeviceKind::kAccelerator);
  EXPECT_EQ(ClassifyPciDevice(0x0b40, false), DeviceKind::kAccelerator);
  EXPECT_EQ(ClassifyPciDevice(0x0200, false), DeviceKind::kNetwork);
  EXPECT_EQ(ClassifyPciDevice(0x0207, false), DeviceKind::kNetwork);
  EXPECT_EQ(ClassifyPciDevice(0x0c06, false), DeviceKind::kNetwork);
  EXPECT_EQ(ClassifyPciDevice(0x0108, false), DeviceKind::kStorage);
  EXPECT_EQ(ClassifyPciDevice(0x0680, false), DeviceKind::kOther);
  EXPECT_EQ(ClassifyPciDevice(0x0000, false), DeviceKind::kOther);
  EXPECT_EQ(DeviceKindName(DeviceKind::kAccelerator), "accelerator");
  EXPECT_EQ(DeviceKindName(DeviceKind::kNetwork), "network");
}

}  // namespace
}  // namespace topologyd::topology
