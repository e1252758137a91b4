// Loads every recorded hwloc XML (the recorded-machine corpus and its kubelet-test/ folder) and
// checks the model's invariants, the facts the folder's README lists per machine, and the
// exact CPU maps of kubelet's CPU-manager test topologies.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/topology/hwloc_reader.h"
#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_json.h"
#include "tests/corpus/corpus_util.h"

namespace topologyd::topology {
namespace {

using testing::KubeletTopologies;
using testing::SharedTopologies;
using testing::XmlFilesIn;

absl::StatusOr<Topology> Load(const std::filesystem::path& file) {
  return LoadTopology(TopologySource::Xml(file.string()));
}

void CheckInvariants(const Topology& topology) {
  const CpuSet all = topology.AllCpus();
  ASSERT_FALSE(all.IsEmpty());
  for (size_t i = 1; i < topology.cpus.size(); ++i) {
    ASSERT_LT(topology.cpus[i - 1].id, topology.cpus[i].id) << "cpus sorted and unique";
  }

  // Every CPU in exactly one core and one package, consistent with the per-CPU ids.
  std::map<int, int> core_hits;
  for (const Core& core : topology.cores) {
    EXPECT_FALSE(core.cpus.IsEmpty());
    for (int cpu : core.cpus) {
      ++core_hits[cpu];
      const Cpu* info = topology.FindCpu(cpu);
      ASSERT_NE(info, nullptr) << "core CPU " << cpu << " is not a CPU";
      EXPECT_EQ(info->core_id, core.id) << "cpu " << cpu;
      EXPECT_EQ(info->package_id, core.package_id) << "cpu " << cpu;
    }
  }
  std::map<int, int> package_hits;
  for (const Package& package : topology.packages) {
    for (int cpu : package.cpus) {
      ++package_hits[cpu];
      EXPECT_EQ(topology.FindCpu(cpu)->package_id, package.id) << "cpu " << cpu;
    }
  }
  // At most one NUMA node; CPUs of memory-less dies are in none.
  std::map<int, int> numa_hits;
  for (size_t i = 0; i < topology.numa_nodes.size(); ++i) {
    const NumaNode& node = topology.numa_nodes[i];
    if (i > 0) {
      EXPECT_LT(topology.numa_nodes[i - 1].id, node.id) << "NUMA ids sorted, unique";
    }
    if (node.cpus.IsEmpty()) {
      EXPECT_GT(node.memory_bytes, 0u) << "CPU-less node " << node.id << " has no memory";
    }
    for (int cpu : node.cpus) {
      ++numa_hits[cpu];
      EXPECT_EQ(topology.FindCpu(cpu)->numa_id, node.id) << "cpu " << cpu;
    }
  }
  for (const Cpu& cpu : topology.cpus) {
    EXPECT_EQ(core_hits[cpu.id], 1) << "cpu " << cpu.id << " cores";
    EXPECT_EQ(package_hits[cpu.id], 1) << "cpu " << cpu.id << " packages";
    EXPECT_LE(numa_hits[cpu.id], 1) << "cpu " << cpu.id << " NUMA nodes";
    if (numa_hits[cpu.id] == 0) {
      EXPECT_EQ(cpu.numa_id, -1) << "cpu " << cpu.id;
    }
  }

  // L3 groups are disjoint and agree with the per-CPU ids.
  CpuSet in_l3;
  for (const L3Group& group : topology.l3_groups) {
    EXPECT_FALSE(group.cpus.Intersects(in_l3)) << "L3 " << group.id;
    in_l3.AddAll(group.cpus);
    for (int cpu : group.cpus) EXPECT_EQ(topology.FindCpu(cpu)->l3_id, group.id);
  }

  // Device NUMA ids exist and own CPUs.
  for (const PciDevice& device : topology.pci_devices) {
    for (int id : device.numa_nodes) {
      const NumaNode* node = topology.FindNuma(id);
      ASSERT_NE(node, nullptr) << device.busid << " names NUMA node " << id;
      EXPECT_FALSE(node->cpus.IsEmpty()) << device.busid;
    }
  }

  // Distances: none at all, or a square matrix with 10 on the diagonal.
  const size_t n = topology.numa_nodes.size();
  const bool has_distances = !topology.numa_nodes.front().distances.empty();
  for (size_t i = 0; i < n; ++i) {
    const NumaNode& node = topology.numa_nodes[i];
    if (!has_distances) {
      EXPECT_TRUE(node.distances.empty()) << "node " << node.id;
      continue;
    }
    ASSERT_EQ(node.distances.size(), n) << "node " << node.id;
    EXPECT_EQ(node.distances[i], 10u) << "node " << node.id;
  }
}

TEST(TopologyCorpusTest, EveryXmlLoadsAndKeepsTheModelInvariants) {
  TOPOLOGYD_REQUIRE_CORPUS();
  std::vector<std::filesystem::path> files = XmlFilesIn(SharedTopologies());
  std::vector<std::filesystem::path> kubelet = XmlFilesIn(KubeletTopologies());
  EXPECT_EQ(files.size(), 30u);
  EXPECT_EQ(kubelet.size(), 22u);
  std::set<std::filesystem::path> kubelet_set(kubelet.begin(), kubelet.end());
  files.insert(files.end(), kubelet.begin(), kubelet.end());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    absl::StatusOr<Topology> topology = Load(file);
    ASSERT_TRUE(topology.ok()) << topology.status();
    CheckInvariants(*topology);
    EXPECT_EQ(topology->kubelet_test_map, kubelet_set.contains(file));
  }
}

// The description the loader child sends back is the one this process reads itself.
TEST(TopologyCorpusTest, ChildDescriptionEqualsTheInProcessOne) {
  TOPOLOGYD_REQUIRE_CORPUS();
  std::vector<std::filesystem::path> files = XmlFilesIn(SharedTopologies());
  std::vector<std::filesystem::path> kubelet = XmlFilesIn(KubeletTopologies());
  files.insert(files.end(), kubelet.begin(), kubelet.end());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const TopologySource source = TopologySource::Xml(file.string());
    absl::StatusOr<MachineDescription> from_child = ReadMachine(source);
    ASSERT_TRUE(from_child.ok()) << from_child.status();
    absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(source);
    ASSERT_TRUE(hwloc.ok()) << hwloc.status();
    EXPECT_TRUE(*from_child == DescribeMachine(hwloc->get()));
  }
}

TEST(TopologyCorpusTest, JsonFollowsTheContract) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const std::regex hex4("^[0-9a-f]{4}$");
  const std::set<std::string> kinds = {"gpu", "network", "storage", "accelerator", "other"};
  for (const auto& file : XmlFilesIn(SharedTopologies())) {
    SCOPED_TRACE(file.string());
    absl::StatusOr<Topology> topology = Load(file);
    ASSERT_TRUE(topology.ok()) << topology.status();
    nlohmann::json json = TopologyToJson(*topology);
    std::set<std::string> keys;
    for (const auto& [key, value] : json.items()) keys.insert(key);
    EXPECT_EQ(keys, (std::set<std::string>{"packages", "cores", "cpus", "numa_nodes", "l3_groups",
                                           "pci_devices"}));
    for (const auto& node : json["numa_nodes"]) {
      std::set<std::string> node_keys;
      for (const auto& [key, value] : node.items()) node_keys.insert(key);
      EXPECT_EQ(node_keys,
                (std::set<std::string>{"id", "cpus", "memory_bytes", "hugepages", "distances"}));
      // The CPU list parses back to exactly the model's CPUs.
      auto cpus = CpuSet::Parse(node["cpus"].get<std::string>());
      ASSERT_TRUE(cpus.ok());
      EXPECT_EQ(*cpus, topology->FindNuma(node["id"].get<int>())->cpus);
    }
    for (const auto& device : json["pci_devices"]) {
      for (const char* key : {"vendor_id", "device_id", "class_id"}) {
        EXPECT_TRUE(std::regex_match(device[key].get<std::string>(), hex4)) << device.dump();
      }
      EXPECT_TRUE(kinds.contains(device["kind"].get<std::string>())) << device.dump();
      EXPECT_TRUE(device["numa_nodes"].is_array());
    }
  }
}

// Facts transcribed from the recorded-machine corpus's own README table.
struct MachineFacts {
  const char* file;
  int packages;
  int numa_nodes;
  std::vector<int> cpuless;
  int cores;
  int pus;
  int smt;
  int l3;
  bool distances;
  const char* hugepages;  // README spelling, "-" for none
  const char* pci;        // README spelling of the PCI column
};

const std::vector<MachineFacts>& ReadmeFacts() {
  static const auto* facts = new std::vector<MachineFacts>{
      {"amd-epyc7742-2s-nps4-4xa100-ib.xml",
       2,
       8,
       {},
       128,
       256,
       2,
       32,
       true,
       "2M,1G",
       "gpu 5 (n0,1,3,5,7); net 6 (n1,3,4,5,7); storage 5 (n1,3,5,7)"},
      {"amd-epyc7401-2s-8numa-4xmi50.xml",
       2,
       8,
       {},
       48,
       96,
       2,
       16,
       true,
       "2M,1G",
       "gpu 5 (n0,1,2,5,7); net 3 (n0,3); storage 2 (n0)"},
      {"amd-epyc-trento-1s-nps4-8xmi250x.xml",
       1,
       4,
       {},
       64,
       128,
       2,
       8,
       true,
       "2M,1G",
       "gpu 8 (n0,1,2,3); net 5 (n0,1,2,3); storage 16 (n0)"},
      {"amd-mi300a-4apu-cpx-mode.xml",
       4,
       4,
       {},
       96,
       192,
       2,
       12,
       true,
       "2M,1G",
       "gpu 4 (n0,1,2,3); net 5 (n0,1,2,3); storage 16 (n1)"},
      {"amd-threadripper2990wx-memoryless-dies-2gpu.xml",
       1,
       2,
       {},
       32,
       64,
       2,
       8,
       false,
       "2M,1G",
       "gpu 2 (n0,2); net 3 (n0); storage 4 (n0,2)"},
      {"amd-opteron6276-4s-8numa.xml", 4, 8, {}, 64, 64, 1, 8, true, "2M", "-"},
      {"amd-opteron-4s-8numa-sparse-node-ids.xml", 4, 8, {}, 48, 48, 1, 8, true, "2M", "-"},
      {"intel-xeonmax9462-2s-snc4-hbm-flat.xml",
       2,
       16,
       {8, 9, 10, 11, 12, 13, 14, 15},
       64,
       128,
       2,
       2,
       true,
       "2M,1G",
       "gpu 1 (n0); net 3 (n0,2); storage 4 (n0,3)"},
      {"intel-spr8480-2s-snc4-4xh100.xml",
       2,
       8,
       {},
       112,
       224,
       2,
       2,
       true,
       "2M,1G",
       "gpu 5 (n0,1,3,5,7); net 6 (n0,1,3,5); storage 5 (n0,1,3,7); other 4 (n0,4)"},
      {"intel-gold6230-2s-snc2-memside-cache.xml", 2, 4, {}, 40, 80, 2, 2, true, "2M,1G", "-"},
      {"intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml",
       2,
       2,
       {},
       48,
       96,
       2,
       2,
       true,
       "2M,1G",
       "gpu 8 (n0,1); net 2 (n1); storage 5 (n0)"},
      {"intel-e5-2695v4-2s-smt-off.xml",
       2,
       2,
       {},
       36,
       36,
       1,
       2,
       true,
       "2M,1G",
       "gpu 1 (n0); net 5 (n0,1); storage 2 (n0)"},
      {"intel-cascadelake-ap-2s-4die.xml", 4, 4, {}, 96, 192, 2, 4, true, "2M,1G", "-"},
      {"intel-knl7250-snc4-flat-mcdram.xml",
       1,
       8,
       {4, 5, 6, 7},
       68,
       272,
       4,
       0,
       false,
       "2M,1G",
       "gpu 1 (n0); net 4 (n0); storage 2 (n0)"},
      {"intel-knl7250-quad-flat-mcdram.xml",
       1,
       2,
       {1},
       68,
       272,
       4,
       0,
       true,
       "2M,1G",
       "gpu 1 (n0); net 2 (n0); storage 2 (n0)"},
      {"intel-e7-4870-4s-interleaved-no-pci-locality.xml",
       4,
       4,
       {},
       40,
       40,
       1,
       4,
       true,
       "2M",
       "gpu 1 (1 no locality); net 5 (5 no locality); storage 2 (2 no locality)"},
      {"intel-e5-2680-2s-knc-mic-nvme-dax.xml",
       2,
       2,
       {},
       16,
       16,
       1,
       2,
       true,
       "2M",
       "gpu 1 (n0); net 3 (n0,1); storage 2 (n0); other 1 (n1)"},
      {"intel-e5-4640-sgi-uv2000-24s-24numa.xml",
       24,
       24,
       {},
       192,
       384,
       2,
       24,
       true,
       "2M",
       "gpu 1 (n0); net 7 (n0,4,6); storage 4 (n0,1,8)"},
      {"intel-silver4108-2s-8x-nec-ve.xml",
       2,
       2,
       {},
       16,
       32,
       2,
       2,
       true,
       "2M,1G",
       "net 4 (n0); other 8 (n0)"},
      {"intel-2s-sriov-many-vfs.xml", 2, 2, {}, 16, 16, 1, 2, false, "2M", "net 18 (n0,1)"},
      {"nvidia-dgx2h-16xv100-nvswitch-trimmed-cpus.xml",
       2,
       2,
       {},
       4,
       4,
       1,
       2,
       true,
       "2M,1G",
       "gpu 16 (n0,1); other 12 (n0,1)"},
      {"ibm-power9-2s-4xv100-gpumem-numa-lassen.xml",
       2,
       6,
       {252, 253, 254, 255},
       40,
       160,
       4,
       20,
       true,
       "2M,1G",
       "gpu 5 (n0,8); net 6 (n0,8); storage 2 (n0)"},
      {"ibm-power9-ac922-6xv100-gpumem-numa.xml",
       2,
       8,
       {250, 251, 252, 253, 254, 255},
       8,
       32,
       4,
       4,
       true,
       "2M,1G",
       "gpu 6 (n0,8)"},
      {"ibm-power8nvl-2s-smt8-4xp100.xml",
       2,
       2,
       {},
       20,
       160,
       8,
       20,
       true,
       "1M,16M",
       "gpu 5 (n0,1); net 4 (n0,1); storage 1 (n1)"},
      {"ibm-power7-780-8numa-smt4.xml", 64, 8, {}, 64, 256, 4, 64, true, "-", "-"},
      {"arm-kunpeng920-2s-4numa-clusters.xml",
       2,
       4,
       {},
       128,
       128,
       1,
       4,
       true,
       "64K,2M,32M,1G",
       "-"},
      {"arm-thunderx2-2s-smt4-apollo70.xml",
       2,
       2,
       {},
       64,
       256,
       4,
       2,
       true,
       "2M,512M",
       "gpu 3 (n0,1); net 4 (n0,1); storage 4 (n0,1)"},
      {"ia64-altix-64numa.xml", 128, 64, {}, 256, 256, 1, 0, true, "-", "-"},
      {"ia64-9140n-17numa-cpuless-node.xml", 64, 17, {16}, 128, 128, 1, 0, true, "-", "-"},
      {"qemu-emulated-heteromem-dram-hbm-nvm.xml", 1, 7, {4, 6, 8, 9}, 6, 6, 1, 1, true, "2M", "-"},
  };
  return *facts;
}

std::string PageSizes(const Topology& topology) {
  std::set<uint64_t> sizes;
  for (const NumaNode& node : topology.numa_nodes) {
    for (const HugePages& pages : node.hugepages) sizes.insert(pages.size_kib);
  }
  std::vector<std::string> names;
  for (uint64_t kib : sizes) {
    if (kib % (1024 * 1024) == 0) {
      names.push_back(std::to_string(kib / (1024 * 1024)) + "G");
    } else if (kib % 1024 == 0) {
      names.push_back(std::to_string(kib / 1024) + "M");
    } else {
      names.push_back(std::to_string(kib) + "K");
    }
  }
  if (names.empty()) return "-";
  std::string out = names[0];
  for (size_t i = 1; i < names.size(); ++i) out += "," + names[i];
  return out;
}

// The README's PCI column: per class (its "other" = our accelerator + other) the count and
// the union of local NUMA nodes, or "(N no locality)".
std::string PciSummary(const Topology& topology) {
  struct ClassSummary {
    int count = 0;
    int without_locality = 0;
    std::set<int> nodes;
  };
  std::map<std::string, ClassSummary> classes;
  for (const PciDevice& device : topology.pci_devices) {
    std::string name = device.kind == DeviceKind::kGpu       ? "gpu"
                       : device.kind == DeviceKind::kNetwork ? "net"
                       : device.kind == DeviceKind::kStorage ? "storage"
                                                             : "other";
    ClassSummary& summary = classes[name];
    ++summary.count;
    if (device.numa_nodes.empty()) ++summary.without_locality;
    summary.nodes.insert(device.numa_nodes.begin(), device.numa_nodes.end());
  }
  std::vector<std::string> parts;
  for (const char* name : {"gpu", "net", "storage", "other"}) {
    auto it = classes.find(name);
    if (it == classes.end()) continue;
    std::ostringstream part;
    part << name << " " << it->second.count << " (";
    if (it->second.without_locality == it->second.count) {
      part << it->second.count << " no locality";
    } else {
      part << "n";
      bool first = true;
      for (int node : it->second.nodes) {
        part << (first ? "" : ",") << node;
        first = false;
      }
    }
    part << ")";
    parts.push_back(part.str());
  }
  if (parts.empty()) return "-";
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out += "; " + parts[i];
  return out;
}

TEST(TopologyCorpusTest, RealMachinesMatchTheReadmeFacts) {
  TOPOLOGYD_REQUIRE_CORPUS();
  int numa_total = 0, cpuless_total = 0, pu_total = 0, pci_total = 0;
  std::set<int> smt_widths;
  for (const MachineFacts& facts : ReadmeFacts()) {
    SCOPED_TRACE(facts.file);
    absl::StatusOr<Topology> topology = Load(SharedTopologies() / facts.file);
    ASSERT_TRUE(topology.ok()) << topology.status();
    EXPECT_EQ(static_cast<int>(topology->packages.size()), facts.packages);
    EXPECT_EQ(static_cast<int>(topology->numa_nodes.size()), facts.numa_nodes);
    std::vector<int> cpuless;
    for (const NumaNode& node : topology->numa_nodes) {
      if (node.cpus.IsEmpty()) cpuless.push_back(node.id);
    }
    EXPECT_EQ(cpuless, facts.cpuless);
    EXPECT_EQ(static_cast<int>(topology->cores.size()), facts.cores);
    EXPECT_EQ(static_cast<int>(topology->cpus.size()), facts.pus);
    for (const Core& core : topology->cores) {
      EXPECT_EQ(core.cpus.Size(), facts.smt) << "core " << core.id;
      EXPECT_EQ(core.id, core.cpus.Min()) << "real machines: core id = lowest CPU";
    }
    EXPECT_EQ(static_cast<int>(topology->l3_groups.size()), facts.l3);
    EXPECT_EQ(!topology->numa_nodes.front().distances.empty(), facts.distances);
    EXPECT_EQ(PageSizes(*topology), facts.hugepages);
    EXPECT_EQ(PciSummary(*topology), facts.pci);
    EXPECT_FALSE(topology->kubelet_test_map);
    numa_total += static_cast<int>(topology->numa_nodes.size());
    cpuless_total += static_cast<int>(cpuless.size());
    pu_total += static_cast<int>(topology->cpus.size());
    pci_total += static_cast<int>(topology->pci_devices.size());
    smt_widths.insert(facts.smt);
  }
  // README totals: 30 files, 242 NUMA nodes (28 CPU-less), 4,022 PUs, 277 PCI devices.
  EXPECT_EQ(ReadmeFacts().size(), 30u);
  EXPECT_EQ(numa_total, 242);
  EXPECT_EQ(cpuless_total, 28);
  EXPECT_EQ(pu_total, 4022);
  EXPECT_EQ(pci_total, 277);
  EXPECT_EQ(smt_widths, (std::set<int>{1, 2, 4, 8}));
}

TEST(TopologyCorpusTest, QuirksOfParticularMachines) {
  TOPOLOGYD_REQUIRE_CORPUS();
  {
    // Memory-less dies: PUs 16-31 and 48-63 are in no NUMA node.
    auto topology = Load(SharedTopologies() / "amd-threadripper2990wx-memoryless-dies-2gpu.xml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    CpuSet orphans;
    for (const Cpu& cpu : topology->cpus) {
      if (cpu.numa_id == -1) orphans.Add(cpu.id);
    }
    EXPECT_EQ(orphans.ToString(), "16-31,48-63");
  }
  {
    // Interleaved CPU ids: even on package 0, odd on package 1.
    auto topology = Load(SharedTopologies() / "intel-gold6230-2s-snc2-memside-cache.xml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    for (const Cpu& cpu : topology->cpus) EXPECT_EQ(cpu.package_id, cpu.id % 2) << cpu.id;
    // L3Cache os_index is recorded here (sysfs cache id): it is the uncore id.
    EXPECT_EQ(topology->FindCpu(1)->l3_id, 1);
  }
  {
    // Sparse NUMA ids.
    auto topology = Load(SharedTopologies() / "amd-opteron-4s-8numa-sparse-node-ids.xml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    std::vector<int> ids;
    for (const NumaNode& node : topology->numa_nodes) ids.push_back(node.id);
    EXPECT_THAT(ids, ::testing::ElementsAre(0, 1, 2, 33, 34, 45, 72, 73));
    EXPECT_EQ(topology->FindNuma(33)->cpus.ToString(), "18-23");
    EXPECT_EQ(topology->FindNuma(33)->memory_bytes, uint64_t{17179869184});
  }
  {
    // EPYC 7742: SMT siblings 128 apart; no L3 os_index, so L3 id = lowest CPU.
    auto topology = Load(SharedTopologies() / "amd-epyc7742-2s-nps4-4xa100-ib.xml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    EXPECT_EQ(topology->FindCpu(128)->core_id, 0);
    EXPECT_EQ(topology->FindCpu(133)->l3_id, 4);
    EXPECT_EQ(topology->FindCpu(133)->numa_id, 0);
  }
  {
    // ThunderX2: the four threads of a core are 32 ids apart.
    auto topology = Load(SharedTopologies() / "arm-thunderx2-2s-smt4-apollo70.xml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    const Cpu* cpu = topology->FindCpu(96);
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(cpu->core_id, 0);
  }
}

// --- kubelet test maps -----------------------------------------------------------------

struct KubeletCpu {
  int core = -1;
  int socket = -1;
  int numa = -1;
  int uncore = -1;  // -1: no L3 ancestor
};

// Reads the per-CPU map straight from the XML text, without hwloc: a PU's core, socket and
// uncore are the os_index of its Core, Package and L3Cache ancestors; its NUMA node is the
// NUMANode memory child of its nearest ancestor that has one.
std::map<int, KubeletCpu> ReadKubeletMap(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  struct Frame {
    std::string type;
    int os_index;
    int numa_child;
    int parent;
  };
  std::vector<Frame> frames;
  std::vector<int> stack;
  std::vector<std::pair<int, int>> pus;  // (PU os_index, frame of its parent)
  const std::regex tag(R"re(<object type="(\w+)"(?: os_index="(\d+)")?[^>]*?(/?)>|</object>)re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    if (!m[1].matched) {
      stack.pop_back();
      continue;
    }
    int parent = stack.empty() ? -1 : stack.back();
    int os_index = m[2].matched ? std::stoi(m[2].str()) : -1;
    frames.push_back(Frame{m[1].str(), os_index, -1, parent});
    int self = static_cast<int>(frames.size()) - 1;
    if (m[1].str() == "NUMANode" && parent >= 0) frames[parent].numa_child = os_index;
    if (m[1].str() == "PU") pus.emplace_back(os_index, parent);
    if (m[3].str() != "/") stack.push_back(self);
  }
  std::map<int, KubeletCpu> map;
  for (const auto& [pu, parent] : pus) {
    KubeletCpu cpu;
    for (int frame = parent; frame >= 0; frame = frames[frame].parent) {
      const Frame& f = frames[frame];
      if (f.type == "Core" && cpu.core < 0) cpu.core = f.os_index;
      if (f.type == "Package" && cpu.socket < 0) cpu.socket = f.os_index;
      if (f.type == "L3Cache" && cpu.uncore < 0) cpu.uncore = f.os_index;
      if (f.numa_child >= 0 && cpu.numa < 0) cpu.numa = f.numa_child;
    }
    map[pu] = cpu;
  }
  return map;
}

TEST(TopologyCorpusTest, KubeletTestMapsReproduceTheirCpuMaps) {
  TOPOLOGYD_REQUIRE_CORPUS();
  std::vector<std::filesystem::path> files = XmlFilesIn(KubeletTopologies());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    absl::StatusOr<Topology> topology = Load(file);
    ASSERT_TRUE(topology.ok()) << topology.status();
    EXPECT_TRUE(topology->kubelet_test_map);
    std::map<int, KubeletCpu> expected = ReadKubeletMap(file);
    ASSERT_EQ(expected.size(), topology->cpus.size());
    const bool has_l3 = !topology->l3_groups.empty();
    for (const Cpu& cpu : topology->cpus) {
      ASSERT_TRUE(expected.contains(cpu.id)) << "cpu " << cpu.id;
      const KubeletCpu& want = expected[cpu.id];
      EXPECT_EQ(cpu.core_id, want.core) << "cpu " << cpu.id;
      EXPECT_EQ(cpu.package_id, want.socket) << "cpu " << cpu.id;
      EXPECT_EQ(cpu.numa_id, want.numa) << "cpu " << cpu.id;
      // README caveat 5: no L3 objects stand for UncoreCacheID 0 everywhere.
      EXPECT_EQ(cpu.l3_id, has_l3 ? want.uncore : 0) << "cpu " << cpu.id;
    }
  }
}

TEST(TopologyCorpusTest, KubeletTestMapsFollowTheReadmeNumberingPatterns) {
  TOPOLOGYD_REQUIRE_CORPUS();
  auto load = [](const char* name) {
    absl::StatusOr<Topology> topology = Load(KubeletTopologies() / name);
    EXPECT_TRUE(topology.ok()) << name << ": " << topology.status();
    return topology.ok() ? *topology : Topology{};
  };
  for (const Cpu& cpu : load("topoSingleSocketHT.xml").cpus) EXPECT_EQ(cpu.core_id, cpu.id % 4);
  for (const Cpu& cpu : load("topoDualSocketHT.xml").cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id % 6);
    EXPECT_EQ(cpu.package_id, cpu.core_id % 2);
    EXPECT_EQ(cpu.numa_id, cpu.core_id % 2);
    EXPECT_EQ(cpu.l3_id, 0);
  }
  for (const Cpu& cpu : load("topoDualSocketNoHT.xml").cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id);
    EXPECT_EQ(cpu.package_id, cpu.id / 4);
    EXPECT_EQ(cpu.numa_id, cpu.id / 4);
  }
  for (const Cpu& cpu : load("topoTripleSocketHT.xml").cpus) {
    EXPECT_EQ(cpu.package_id, cpu.id < 6 ? 1 : cpu.id < 12 ? 0 : 2) << cpu.id;
  }
  for (const Cpu& cpu : load("topoDualSocketMultiNumaPerSocketHT.xml").cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id % 40);
    EXPECT_EQ(cpu.package_id, cpu.core_id / 20);
    EXPECT_EQ(cpu.numa_id, cpu.core_id / 10);
  }
  for (const Cpu& cpu : load("fakeTopoMultiSocketDualSocketPerNumaHT.xml").cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id % 40);
    EXPECT_EQ(cpu.package_id, cpu.core_id / 10);
    EXPECT_EQ(cpu.numa_id, cpu.core_id / 20);
  }
  for (const Cpu& cpu : load("topoDualSocketMultiNumaPerSocketHTLarge.xml").cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id % 128);
    EXPECT_EQ(cpu.package_id, cpu.core_id / 64);
    EXPECT_EQ(cpu.numa_id, cpu.core_id / 16);
  }
  // Caveat 3: core ids reused across sockets; CPU c and c+96 share CoreID c mod 96.
  Topology reused = load("topoDualSocketMultiNumaPerSocketUncore.xml");
  EXPECT_EQ(reused.cores.size(), 192u);
  for (int c = 0; c < 96; ++c) {
    ASSERT_NE(reused.FindCpu(c + 96), nullptr);
    EXPECT_EQ(reused.FindCpu(c)->core_id, c);
    EXPECT_EQ(reused.FindCpu(c + 96)->core_id, c);
    EXPECT_NE(reused.FindCpu(c)->package_id, reused.FindCpu(c + 96)->package_id);
  }
  // Caveat 4: hybrid core sizes, 24 CPUs on 16 cores.
  Topology hybrid = load("topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore.xml");
  EXPECT_EQ(hybrid.cpus.size(), 24u);
  EXPECT_EQ(hybrid.cores.size(), 16u);
  EXPECT_EQ(hybrid.l3_groups.size(), 1u);
}

}  // namespace
}  // namespace topologyd::topology
