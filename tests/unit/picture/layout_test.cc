// The picture layout on hand-built machines, hwloc synthetic ones and every recorded machine:
// every CPU, core and NUMA node is one box, boxes nest and do not overlap, CPU-less nodes and
// devices sit where they belong.
#include "lib/picture/layout.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/topology/hwloc_source.h"
#include "tests/corpus/corpus_util.h"
#include "tests/unit/picture/machines.h"

namespace topologyd::picture {
namespace {

using testing::Device;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::Machine;

// Every box of `kind` under `root`, in drawing order.
std::vector<const Box*> BoxesOf(const Box& root, BoxKind kind) {
  std::vector<const Box*> found;
  std::function<void(const Box&)> walk = [&](const Box& b) {
    if (b.kind == kind) found.push_back(&b);
    for (const Box& child : b.children) walk(child);
  };
  walk(root);
  return found;
}

std::vector<int> IdsOf(const Box& root, BoxKind kind) {
  std::vector<int> ids;
  for (const Box* b : BoxesOf(root, kind)) ids.push_back(b->id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The parent of every box, by address.
std::map<const Box*, const Box*> Parents(const Box& root) {
  std::map<const Box*, const Box*> parents;
  std::function<void(const Box&)> walk = [&](const Box& b) {
    for (const Box& child : b.children) {
      parents[&child] = &b;
      walk(child);
    }
  };
  walk(root);
  return parents;
}

bool Overlap(const Rect& a, const Rect& b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

// What must hold for any machine.
void ExpectWellFormed(const topology::Topology& m, const Box& root, const std::string& name) {
  SCOPED_TRACE(name);
  std::vector<int> cpu_ids;
  for (const auto& c : m.cpus) cpu_ids.push_back(c.id);
  EXPECT_THAT(IdsOf(root, BoxKind::kCpu), ElementsAreArray(cpu_ids));
  std::vector<int> numa_ids;
  for (const auto& n : m.numa_nodes) numa_ids.push_back(n.id);
  std::vector<int> drawn_numa;
  for (int id : IdsOf(root, BoxKind::kNuma)) {
    if (id >= 0) drawn_numa.push_back(id);
  }
  EXPECT_THAT(drawn_numa, ElementsAreArray(numa_ids));
  std::multiset<std::pair<int, int>> cores;
  for (const auto& c : m.cores) cores.insert({c.package_id, c.id});
  std::multiset<std::pair<int, int>> drawn_cores;
  for (const Box* b : BoxesOf(root, BoxKind::kCore)) drawn_cores.insert({b->package_id, b->id});
  EXPECT_EQ(drawn_cores, cores);
  EXPECT_EQ(CountBoxes(root, BoxKind::kDevice), static_cast<int>(m.pci_devices.size()));

  const auto parents = Parents(root);
  for (const auto& [child, parent] : parents) {
    EXPECT_TRUE(parent->rect.Contains(child->rect))
        << BoxKindName(child->kind) << " " << child->id << " sticks out of "
        << BoxKindName(parent->kind) << " " << parent->id;
    EXPECT_GT(child->rect.width, 0);
    EXPECT_GT(child->rect.height, 0);
  }
  std::function<void(const Box&)> siblings = [&](const Box& b) {
    for (size_t i = 0; i < b.children.size(); ++i) {
      for (size_t j = i + 1; j < b.children.size(); ++j) {
        EXPECT_FALSE(Overlap(b.children[i].rect, b.children[j].rect))
            << BoxKindName(b.children[i].kind) << " " << b.children[i].id << " overlaps "
            << BoxKindName(b.children[j].kind) << " " << b.children[j].id;
      }
      siblings(b.children[i]);
    }
  };
  siblings(root);
  // CPUs sit in a core of their own core id, and in the NUMA box of their node.
  for (const Box* cpu : BoxesOf(root, BoxKind::kCpu)) {
    const topology::Cpu* c = m.FindCpu(cpu->id);
    ASSERT_NE(c, nullptr);
    const Box* core = parents.at(cpu);
    EXPECT_EQ(core->kind, BoxKind::kCore);
    EXPECT_EQ(core->id, c->core_id);
    const Box* up = core;
    while (up->kind != BoxKind::kNuma && parents.contains(up)) up = parents.at(up);
    EXPECT_EQ(up->kind, BoxKind::kNuma);
    EXPECT_EQ(up->id, c->numa_id) << "CPU " << c->id;
  }
}

TEST(LayoutTest, NestsPackagesDiesNumaNodesL3GroupsCoresAndCpus) {
  const topology::Topology m = Machine(2, 2, 4, 2);
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "2x2x4x2");
  EXPECT_EQ(root.label, "Machine · 2 packages · 4 NUMA nodes · 16 cores · 32 CPUs");
  EXPECT_EQ(root.rect.x, 0);
  EXPECT_EQ(root.rect.y, 0);
  ASSERT_EQ(root.children.size(), 2u);
  const Box& package = root.children[0];
  EXPECT_EQ(package.kind, BoxKind::kPackage);
  EXPECT_EQ(package.label, "Package 0");
  ASSERT_EQ(package.children.size(), 1u);
  const Box& die = package.children[0];
  EXPECT_EQ(die.kind, BoxKind::kDie);
  ASSERT_EQ(die.children.size(), 2u);
  const Box& numa = die.children[1];
  EXPECT_EQ(numa.kind, BoxKind::kNuma);
  EXPECT_EQ(numa.id, 1);
  EXPECT_EQ(numa.label, "NUMA 1 · 16 GiB");
  ASSERT_EQ(numa.children.size(), 1u);
  EXPECT_EQ(numa.children[0].kind, BoxKind::kL3);
  EXPECT_EQ(numa.children[0].children.size(), 4u);
  EXPECT_THAT(IdsOf(numa, BoxKind::kCpu), ElementsAre(8, 9, 10, 11, 12, 13, 14, 15));
}

TEST(LayoutTest, L3GroupSpanningNumaNodesIsDrawnAroundThem) {
  // Sub-NUMA clustering: one L3 for the whole package, two NUMA nodes inside it.
  topology::Topology m = Machine(1, 2, 2, 2);
  for (auto& c : m.cpus) c.l3_id = 0;
  m.l3_groups = {{.id = 0, .cpus = CpuSet::Range(0, 7)}};
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "snc");
  const std::vector<const Box*> l3 = BoxesOf(root, BoxKind::kL3);
  ASSERT_EQ(l3.size(), 1u);
  EXPECT_EQ(CountBoxes(*l3[0], BoxKind::kNuma), 2);
}

TEST(LayoutTest, LevelsThatDoNotNestAreLeftOut) {
  // NUMA node 0 spans dies 0 and 1, so dies cannot be boxes around NUMA nodes.
  topology::Topology m = Machine(1, 2, 2, 1);
  m.cpus[0].die_id = 0;
  m.cpus[1].die_id = 1;
  m.cpus[2].die_id = 1;
  m.cpus[3].die_id = 1;
  m.dies = {{.id = 0, .package_id = 0, .cpus = CpuSet{0}},
            {.id = 1, .package_id = 0, .cpus = CpuSet::Range(1, 3)}};
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "crossing dies");
  EXPECT_EQ(CountBoxes(root, BoxKind::kDie), 0);
  EXPECT_EQ(CountBoxes(root, BoxKind::kPackage), 1);
}

TEST(LayoutTest, CpuLessNodeSitsBesideTheNearestCpuNode) {
  topology::Topology m = Machine(2, 1, 2, 2);
  m.numa_nodes.push_back({.id = 2, .memory_bytes = uint64_t{64} << 30, .subtype = "HBM"});
  m.numa_nodes.push_back({.id = 3, .memory_bytes = uint64_t{8} << 30});
  m.numa_nodes[0].distances = {10, 20, 30, 15};
  m.numa_nodes[1].distances = {20, 10, 13, 30};
  m.numa_nodes[2].distances = {30, 13, 10, 40};
  m.numa_nodes[3].distances = {15, 30, 40, 10};
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "cpu-less");
  const auto parents = Parents(root);
  std::map<int, const Box*> numa;
  for (const Box* b : BoxesOf(root, BoxKind::kNuma)) numa[b->id] = b;
  ASSERT_EQ(numa.size(), 4u);
  EXPECT_EQ(parents.at(numa[2]), parents.at(numa[1]));  // distance 13 to node 1
  EXPECT_EQ(parents.at(numa[3]), parents.at(numa[0]));  // distance 15 to node 0
  EXPECT_EQ(numa[2]->label, "NUMA 2 HBM · 64 GiB · no CPUs");
  EXPECT_TRUE(numa[2]->children.empty());
}

TEST(LayoutTest, CpuLessNodesWithoutDistancesAndMachinesWithoutCpus) {
  topology::Topology m = Machine(1, 1, 1, 2);
  m.numa_nodes.push_back({.id = 5, .memory_bytes = uint64_t{1} << 29});
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "no distances");
  EXPECT_EQ(BoxesOf(root, BoxKind::kNuma).back()->label, "NUMA 5 · 512 MiB · no CPUs");

  topology::Topology memory_only;
  memory_only.numa_nodes = {{.id = 0, .memory_bytes = uint64_t{1} << 30}};
  const Box alone = LayOutMachine(memory_only);
  ExpectWellFormed(memory_only, alone, "no CPUs at all");
  EXPECT_EQ(alone.label, "Machine · 0 packages · 1 NUMA node · 0 cores · 0 CPUs");
}

TEST(LayoutTest, DevicesSitUnderTheirNumaNode) {
  topology::Topology m = Machine(2, 1, 2, 2);
  m.numa_nodes.push_back({.id = 2, .memory_bytes = uint64_t{32} << 30, .subtype = "GPUMemory"});
  m.pci_devices = {Device("0000:3b:00.0", {1}), Device("0000:5e:00.0", {0, 1}),
                   Device("0000:af:00.0", {2}),
                   Device("0001:02:00.0", {}, topology::DeviceKind::kNetwork)};
  m.pci_devices[1].physfn_busid = "0000:5d:00.0";
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "devices");
  const auto parents = Parents(root);
  std::map<int, const Box*> devices;
  for (const Box* b : BoxesOf(root, BoxKind::kDevice)) devices[b->id] = b;
  ASSERT_EQ(devices.size(), 4u);
  auto parent_of = [&](int device) { return parents.at(devices[device]); };
  EXPECT_EQ(parent_of(0)->kind, BoxKind::kNuma);
  EXPECT_EQ(parent_of(0)->id, 1);
  EXPECT_EQ(parent_of(1)->id, 0);  // the first of its nodes
  EXPECT_EQ(parent_of(2)->id, 2);  // a CPU-less node holds its device too
  EXPECT_EQ(parent_of(3)->kind, BoxKind::kUnplacedDevices);
  EXPECT_EQ(devices[0]->label, "gpu 3b:00.0");
  EXPECT_EQ(devices[1]->label, "gpu vf 5e:00.0");
  EXPECT_EQ(devices[3]->label, "net 0001:02:00.0");
  // Devices come after the cores, on a row of their own.
  const Box* node1 = parent_of(0);
  int cores_bottom = 0;
  for (const Box* core : BoxesOf(*node1, BoxKind::kCore)) {
    cores_bottom = std::max(cores_bottom, core->rect.y + core->rect.height);
  }
  EXPECT_GE(devices[0]->rect.y, cores_bottom);
}

TEST(LayoutTest, CpusOnNoNumaNodeGetABoxOfTheirOwn) {
  // A memory-less die: its CPUs belong to no NUMA node.
  topology::Topology m = Machine(1, 2, 2, 2);
  for (auto& c : m.cpus) {
    if (c.numa_id == 1) c.numa_id = -1;
  }
  m.numa_nodes.pop_back();
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "memory-less die");
  EXPECT_EQ(BoxesOf(root, BoxKind::kNuma).front()->label, "no NUMA node");
}

TEST(LayoutTest, LargeMachineStaysWithinAScreenfulOrTwo) {
  // 512 CPUs on 8 NUMA nodes: wide rather than tall, and no wider than two screens.
  const topology::Topology m = Machine(2, 4, 32, 2);
  const Box root = LayOutMachine(m);
  ExpectWellFormed(m, root, "512 CPUs");
  EXPECT_LE(root.rect.width, 4000);
  EXPECT_LE(root.rect.height, 2400);
  EXPECT_GE(root.rect.width, root.rect.height / 2);
}

TEST(LayoutTest, SyntheticMachinesFromHwloc) {
  for (const char* description :
       {"pack:2 numa:1 core:4 pu:2", "pack:2 die:2 numa:2 l3:1 core:8 pu:2",
        "pack:4 numa:2 l3:2 core:4 pu:4", "numa:64 core:4 pu:2", "pack:2 numa:4 core:32 pu:2"}) {
    absl::StatusOr<topology::Topology> m =
        topology::LoadTopology(topology::TopologySource::Synthetic(description));
    ASSERT_TRUE(m.ok()) << m.status();
    ExpectWellFormed(*m, LayOutMachine(*m), description);
  }
}

TEST(LayoutTest, EveryRecordedMachine) {
  TOPOLOGYD_REQUIRE_CORPUS();
  std::vector<std::filesystem::path> files =
      topology::testing::XmlFilesIn(topology::testing::SharedTopologies());
  const auto kubelet = topology::testing::XmlFilesIn(topology::testing::KubeletTopologies());
  files.insert(files.end(), kubelet.begin(), kubelet.end());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    absl::StatusOr<topology::Topology> m =
        topology::LoadTopology(topology::TopologySource::Xml(file.string()));
    ASSERT_TRUE(m.ok()) << file << ": " << m.status();
    ExpectWellFormed(*m, LayOutMachine(*m), file.filename().string());
  }
}

}  // namespace
}  // namespace topologyd::picture
