#include "lib/placement/mapping.h"

#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/uuid5.h"
#include "lib/topology/hwloc_source.h"
#include "tests/corpus/corpus_util.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::topologyd::placement::testing::TestHost;
using ::topologyd::placement::testing::TestHostOffer;
using ::topologyd::placement::testing::TestHostOptions;

const Provider& Named(const ProviderTree& tree, const std::string& name) {
  for (const Provider& p : tree.providers) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no provider " << name;
  static const Provider kNone;
  return kNone;
}

bool Has(const ProviderTree& tree, const std::string& name) {
  for (const Provider& p : tree.providers) {
    if (p.name == name) return true;
  }
  return false;
}

Inventory Inv(int64_t total, int64_t reserved, int64_t step, double ratio = 1.0) {
  return Inventory{.total = total,
                   .reserved = reserved,
                   .min_unit = step,
                   .max_unit = total,
                   .step_size = step,
                   .allocation_ratio = ratio};
}

ProviderTree Build(const topology::Topology& t, const NodeOffer& offer,
                   const PlacementOptions& options) {
  absl::StatusOr<ProviderTree> tree = BuildProviderTree(t, offer, options);
  EXPECT_TRUE(tree.ok()) << tree.status();
  return tree.ok() ? *tree : ProviderTree{};
}

TEST(PlacementMapping, TestHostTree) {
  const ProviderTree tree = Build(TestHost(), TestHostOffer(), TestHostOptions());
  std::vector<std::string> names;
  for (const Provider& p : tree.providers) names.push_back(p.name);
  EXPECT_THAT(
      names,
      ElementsAre("e2e-host", "e2e-host_NUMA0", "e2e-host_NUMA0_PAGE_4KB",
                  "e2e-host_NUMA0_PAGE_2048KB", "e2e-host_NUMA0_PAGE_1048576KB", "e2e-host_NUMA1",
                  "e2e-host_NUMA1_PAGE_4KB", "e2e-host_NUMA1_PAGE_2048KB",
                  "e2e-host_NUMA1_PAGE_1048576KB", "e2e-host_NUMA2", "e2e-host_NUMA2_PAGE_4KB",
                  "e2e-host_NUMA3", "e2e-host_NUMA3_PAGE_4KB", "e2e-host_NUMA3_PAGE_2048KB",
                  "e2e-host_0000:3B:00.0", "e2e-host_0000:5E:00.0", "e2e-host_0000:AF:00.0"));
  const Provider& root = tree.root();
  EXPECT_EQ(root.uuid, "0102dcb9-f457-5456-a113-77a7f45bf491");
  EXPECT_FALSE(root.parent_uuid.has_value());
  EXPECT_THAT(root.inventories, IsEmpty());
  EXPECT_THAT(root.traits, IsEmpty());

  const Provider& numa0 = Named(tree, "e2e-host_NUMA0");
  EXPECT_EQ(numa0.uuid, "52e655b2-ecee-5c3f-ac8e-1cccf3a13eb6");
  EXPECT_EQ(numa0.parent_uuid, root.uuid);
  EXPECT_EQ(numa0.traits, std::set<std::string>{"HW_NUMA_ROOT"});
  EXPECT_EQ(numa0.inventories.at("PCPU"), Inv(10, 2, 1));
  EXPECT_EQ(numa0.inventories.at("VCPU"), Inv(6, 0, 1, 4.0));

  const Provider& base0 = Named(tree, "e2e-host_NUMA0_PAGE_4KB");
  EXPECT_EQ(base0.uuid, "0bc7a8d4-fcdb-580c-ab48-449ec7c5a3b6");
  EXPECT_EQ(base0.parent_uuid, numa0.uuid);
  EXPECT_EQ(base0.inventories.at("MEMORY_MB"), Inv(57682, 2048, 1));
  EXPECT_EQ(base0.traits,
            (std::set<std::string>{"CUSTOM_MEMORY_PAGE_SIZE_4", "CUSTOM_MEMORY_PAGE_SIZE_SMALL"}));
  EXPECT_EQ(Named(tree, "e2e-host_NUMA0_PAGE_2048KB").inventories.at("MEMORY_MB"), Inv(2048, 0, 2));
  const Provider& giant0 = Named(tree, "e2e-host_NUMA0_PAGE_1048576KB");
  EXPECT_EQ(giant0.inventories.at("MEMORY_MB"), Inv(4096, 1024, 1024));
  EXPECT_EQ(giant0.traits, (std::set<std::string>{"CUSTOM_MEMORY_PAGE_SIZE_1048576",
                                                  "CUSTOM_MEMORY_PAGE_SIZE_LARGE"}));

  // Node 1: all CPUs pinnable, none reserved; base pages are what the huge pages leave.
  const Provider& numa1 = Named(tree, "e2e-host_NUMA1");
  EXPECT_EQ(numa1.inventories, (std::map<std::string, Inventory>{{"PCPU", Inv(16, 0, 1)}}));
  EXPECT_EQ(Named(tree, "e2e-host_NUMA1_PAGE_4KB").inventories.at("MEMORY_MB"),
            Inv(65536 - 1024 - 2048, 0, 1));
  // Node 2: huge page sizes with count 0 get no provider.
  EXPECT_FALSE(Has(tree, "e2e-host_NUMA2_PAGE_2048KB"));
  EXPECT_FALSE(Has(tree, "e2e-host_NUMA2_PAGE_1048576KB"));
  // Node 3: CPU 32 is node 0's, so nothing reserved here.
  const Provider& numa3 = Named(tree, "e2e-host_NUMA3");
  EXPECT_EQ(numa3.inventories.at("PCPU"), Inv(12, 0, 1));
  EXPECT_EQ(numa3.inventories.at("VCPU"), Inv(4, 0, 1, 4.0));

  // Devices: under their one NUMA node, or the root when local to several; the NIC no pool
  // selects has none.
  const Provider& gpu = Named(tree, "e2e-host_0000:3B:00.0");
  EXPECT_EQ(gpu.uuid, "bca219ae-82d3-5efa-9e2d-e0e6c67c3fe4");
  EXPECT_EQ(gpu.parent_uuid, numa1.uuid);
  EXPECT_EQ(gpu.inventories,
            (std::map<std::string, Inventory>{{"CUSTOM_PCI_10DE_20B0", Inv(1, 0, 1)}}));
  EXPECT_EQ(gpu.traits, std::set<std::string>{"COMPUTE_MANAGED_PCI_DEVICE"});
  EXPECT_EQ(Named(tree, "e2e-host_0000:5E:00.0").parent_uuid, root.uuid);
  EXPECT_EQ(Named(tree, "e2e-host_0000:AF:00.0").parent_uuid, numa3.uuid);
  EXPECT_FALSE(Has(tree, "e2e-host_0000:18:00.0"));

  EXPECT_EQ(tree.custom_resource_classes, std::set<std::string>{"CUSTOM_PCI_10DE_20B0"});
  EXPECT_EQ(
      tree.custom_traits,
      (std::set<std::string>{"CUSTOM_MEMORY_PAGE_SIZE_1048576", "CUSTOM_MEMORY_PAGE_SIZE_2048",
                             "CUSTOM_MEMORY_PAGE_SIZE_4", "CUSTOM_MEMORY_PAGE_SIZE_LARGE",
                             "CUSTOM_MEMORY_PAGE_SIZE_SMALL"}));
}

TEST(PlacementMapping, AllCpusReservedIsReservedEqualsTotal) {
  NodeOffer offer = TestHostOffer();
  offer.reserved_cpus = CpuSet::Range(16, 23).Union(CpuSet::Range(48, 55));  // node 2
  const ProviderTree tree = Build(TestHost(), offer, TestHostOptions());
  EXPECT_EQ(Named(tree, "e2e-host_NUMA2").inventories.at("PCPU"), Inv(16, 16, 1));
}

TEST(PlacementMapping, ReservedIsClampedToTotal) {
  NodeOffer offer = TestHostOffer();
  offer.reserved_memory = {memory::ReservedMemory{
      .numa_node = 1, .limits = {{"memory", 1000 * testing::kGiB}, {"hugepages-2Mi", 3}}}};
  const ProviderTree tree = Build(TestHost(), offer, TestHostOptions());
  EXPECT_EQ(Named(tree, "e2e-host_NUMA1_PAGE_4KB").inventories.at("MEMORY_MB").reserved, 62464);
  // 3 bytes reserved round up to one MiB.
  EXPECT_EQ(Named(tree, "e2e-host_NUMA1_PAGE_2048KB").inventories.at("MEMORY_MB").reserved, 1);
}

TEST(PlacementMapping, CpuPolicyNoneMakesEveryCpuVcpu) {
  NodeOffer offer = TestHostOffer();
  offer.cpus_pinnable = false;
  const ProviderTree tree = Build(TestHost(), offer, TestHostOptions());
  EXPECT_EQ(Named(tree, "e2e-host_NUMA0").inventories,
            (std::map<std::string, Inventory>{{"VCPU", Inv(16, 2, 1, 4.0)}}));
}

TEST(PlacementMapping, NothingToOfferMeansNoInventory) {
  topology::Topology t = TestHost();
  // Node 2 without CPUs; node 1's memory all in huge pages; node 3 without memory.
  t.numa_nodes[2].cpus = CpuSet();
  t.numa_nodes[1].memory_bytes = 512 * 2 * testing::kMiBytes + 2 * testing::kGiB;
  t.numa_nodes[3].memory_bytes = 0;
  t.numa_nodes[3].hugepages.clear();
  const ProviderTree tree = Build(t, TestHostOffer(), TestHostOptions());
  EXPECT_THAT(Named(tree, "e2e-host_NUMA2").inventories, IsEmpty());
  EXPECT_TRUE(Has(tree, "e2e-host_NUMA2_PAGE_4KB"));
  EXPECT_FALSE(Has(tree, "e2e-host_NUMA1_PAGE_4KB"));
  EXPECT_TRUE(Has(tree, "e2e-host_NUMA1_PAGE_2048KB"));
  EXPECT_FALSE(Has(tree, "e2e-host_NUMA3_PAGE_4KB"));
  EXPECT_TRUE(Has(tree, "e2e-host_NUMA3"));
  // No device pool: no device provider and no custom class.
  NodeOffer no_devices = TestHostOffer();
  no_devices.device_selectors.clear();
  const ProviderTree bare = Build(t, no_devices, TestHostOptions());
  EXPECT_FALSE(Has(bare, "e2e-host_0000:3B:00.0"));
  EXPECT_THAT(bare.custom_resource_classes, IsEmpty());
}

TEST(PlacementMapping, RootUuidOverrideChangesTheRootOnly) {
  PlacementOptions options = TestHostOptions();
  options.root_provider_uuid = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE";
  const ProviderTree tree = Build(TestHost(), TestHostOffer(), options);
  EXPECT_EQ(tree.root().uuid, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
  EXPECT_EQ(Named(tree, "e2e-host_NUMA0").uuid, "52e655b2-ecee-5c3f-ac8e-1cccf3a13eb6");
  EXPECT_EQ(Named(tree, "e2e-host_NUMA0").parent_uuid, tree.root().uuid);
}

TEST(PlacementMapping, RefusesSettingsPlacementWouldNotTake) {
  const auto error = [](PlacementOptions options) {
    return std::string(BuildProviderTree(TestHost(), TestHostOffer(), options).status().message());
  };
  PlacementOptions o = TestHostOptions();
  o.node_name = "";
  EXPECT_THAT(error(o), ::testing::HasSubstr("nodeName"));
  o = TestHostOptions();
  o.node_name = std::string(170, 'x');
  EXPECT_THAT(error(o), ::testing::HasSubstr("longer than"));
  o = TestHostOptions();
  o.root_provider_uuid = "not-a-uuid";
  EXPECT_THAT(error(o), ::testing::HasSubstr("rootProviderUUID"));
  o = TestHostOptions();
  o.vcpu_allocation_ratio = 0;
  EXPECT_THAT(error(o), ::testing::HasSubstr("vcpuAllocationRatio"));
  o = TestHostOptions();
  o.base_page_kib = 12;
  EXPECT_THAT(error(o), ::testing::HasSubstr("basePageKiB"));
}

// --- the recorded machines ---

topology::Topology Recorded(const std::string& file) {
  absl::StatusOr<topology::Topology> t = topology::LoadTopology(
      topology::TopologySource::Xml(topology::testing::SharedTopologies() / file));
  EXPECT_TRUE(t.ok()) << file << ": " << t.status();
  return t.ok() ? *t : topology::Topology{};
}

NodeOffer NvidiaOffer() {
  NodeOffer offer;
  offer.device_selectors = {device::PciMatch{.vendor = 0x10de}};
  return offer;
}

PlacementOptions Named(const std::string& name) {
  PlacementOptions options;
  options.node_name = name;
  return options;
}

// What holds for every tree: unique names and uuids derived from them, parents first, every
// NUMA node a provider, inventories Placement accepts, every CPU of the NUMA nodes once and
// no more memory than there is.
void ExpectWellFormed(const topology::Topology& t, const ProviderTree& tree,
                      const std::string& what) {
  SCOPED_TRACE(what);
  std::set<std::string> names;
  std::set<std::string> seen;
  int64_t cpus = 0;
  for (const Provider& p : tree.providers) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_LE(p.name.size(), 200u);
    if (p.parent_uuid) {
      EXPECT_TRUE(seen.contains(*p.parent_uuid)) << p.name << " before its parent";
      EXPECT_EQ(p.uuid, ProviderUuid(p.name));
    }
    seen.insert(p.uuid);
    for (const auto& [rc, inv] : p.inventories) {
      EXPECT_GE(inv.total, 1) << p.name << " " << rc;
      EXPECT_GE(inv.reserved, 0);
      EXPECT_LE(inv.reserved, inv.total);
      EXPECT_EQ(inv.max_unit, inv.total);
      EXPECT_EQ(inv.min_unit, inv.step_size);
      EXPECT_EQ(inv.total % inv.step_size, 0);
      if (rc == "PCPU" || rc == "VCPU") cpus += inv.total;
    }
  }
  CpuSet in_nodes;
  for (const topology::NumaNode& node : t.numa_nodes) in_nodes = in_nodes.Union(node.cpus);
  EXPECT_EQ(cpus, in_nodes.Size());
  for (const topology::NumaNode& node : t.numa_nodes) {
    const std::string numa = NumaProviderName(tree.root().name, node.id);
    ASSERT_TRUE(Has(tree, numa));
    EXPECT_EQ(Named(tree, numa).traits, std::set<std::string>{"HW_NUMA_ROOT"});
    int64_t mib = 0;
    for (const Provider& p : tree.providers) {
      if (p.name.starts_with(numa + "_PAGE_")) mib += p.inventories.at("MEMORY_MB").total;
    }
    EXPECT_LE(static_cast<uint64_t>(mib) * testing::kMiBytes, node.memory_bytes) << numa;
  }
}

TEST(PlacementMappingCorpus, EveryRecordedMachineGivesAWellFormedTree) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const auto files = topology::testing::XmlFilesIn(topology::testing::SharedTopologies());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    const topology::Topology t = Recorded(file.filename().string());
    ExpectWellFormed(t, Build(t, NvidiaOffer(), Named("host")), file.filename().string());
  }
}

TEST(PlacementMappingCorpus, CpuLessHbmNodesHaveOnlyMemory) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const topology::Topology t = Recorded("intel-xeonmax9462-2s-snc4-hbm-flat.xml");
  const ProviderTree tree = Build(t, NodeOffer{}, Named("max"));
  for (int hbm = 8; hbm <= 15; ++hbm) {
    SCOPED_TRACE(hbm);
    EXPECT_THAT(Named(tree, NumaProviderName("max", hbm)).inventories, IsEmpty());
    const Provider& base = Named(tree, PageProviderName("max", hbm, 4));
    EXPECT_EQ(base.inventories.at("MEMORY_MB").total,
              static_cast<int64_t>(t.FindNuma(hbm)->memory_bytes / testing::kMiBytes));
    EXPECT_GT(base.inventories.at("MEMORY_MB").total, 15 * 1024);
  }
  EXPECT_EQ(Named(tree, NumaProviderName("max", 0)).inventories.at("PCPU").total,
            t.FindNuma(0)->cpus.Size());
  // GPU memory exposed as CPU-less NUMA nodes (POWER9): the same shape.
  const topology::Topology p9 = Recorded("ibm-power9-ac922-6xv100-gpumem-numa.xml");
  const ProviderTree gpumem = Build(p9, NodeOffer{}, Named("p9"));
  EXPECT_THAT(Named(gpumem, NumaProviderName("p9", 255)).inventories, IsEmpty());
  EXPECT_TRUE(Has(gpumem, PageProviderName("p9", 255, 4)));
}

TEST(PlacementMappingCorpus, RecordedHugePagesBecomeLargePageProviders) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const topology::Topology t = Recorded("intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml");
  const ProviderTree tree = Build(t, NvidiaOffer(), Named("g4dn"));
  for (const topology::NumaNode& node : t.numa_nodes) {
    for (const topology::HugePages& h : node.hugepages) {
      const std::string name = PageProviderName("g4dn", node.id, h.size_kib);
      ASSERT_EQ(Has(tree, name), h.count > 0) << name;
      if (h.count == 0) continue;
      EXPECT_EQ(Named(tree, name).inventories.at("MEMORY_MB"),
                Inv(static_cast<int64_t>(h.count * h.size_kib / 1024), 0,
                    static_cast<int64_t>(h.size_kib / 1024)));
    }
  }
  // The eight T4s hang off their NUMA nodes.
  int gpus = 0;
  for (const topology::PciDevice& dev : t.pci_devices) {
    if (dev.vendor_id != 0x10de) continue;
    ++gpus;
    const Provider& p = Named(tree, DeviceProviderName("g4dn", dev.busid));
    ASSERT_EQ(dev.numa_nodes.size(), 1u);
    EXPECT_EQ(p.parent_uuid, ProviderUuid(NumaProviderName("g4dn", dev.numa_nodes[0])));
    EXPECT_EQ(p.inventories.begin()->first, PciResourceClass(dev.vendor_id, dev.device_id));
  }
  EXPECT_EQ(gpus, 8);
}

TEST(PlacementMappingCorpus, PagesThatAreNotWholeMiBAreSkipped) {
  TOPOLOGYD_REQUIRE_CORPUS();
  // Kunpeng 920 records 64K, 2M, 32M and 1G pages (none allocated); give each size some.
  topology::Topology t = Recorded("arm-kunpeng920-2s-4numa-clusters.xml");
  for (topology::NumaNode& node : t.numa_nodes) {
    for (topology::HugePages& h : node.hugepages) h.count = 16;
  }
  const ProviderTree tree = Build(t, NodeOffer{}, Named("kp"));
  EXPECT_FALSE(Has(tree, PageProviderName("kp", 0, 64)));
  EXPECT_EQ(Named(tree, PageProviderName("kp", 0, 2048)).inventories.at("MEMORY_MB"),
            Inv(32, 0, 2));
  EXPECT_EQ(Named(tree, PageProviderName("kp", 0, 32768)).inventories.at("MEMORY_MB"),
            Inv(512, 0, 32));
  EXPECT_TRUE(Has(tree, PageProviderName("kp", 0, 1048576)));
  // The 64K pages still leave the base pages, and are not counted twice.
  const uint64_t huge = 16ull * 1024 * (64 + 2048 + 32768 + 1048576);
  EXPECT_EQ(Named(tree, PageProviderName("kp", 0, 4)).inventories.at("MEMORY_MB").total,
            static_cast<int64_t>((t.FindNuma(0)->memory_bytes - huge) / testing::kMiBytes));
  ExpectWellFormed(t, tree, "kunpeng with pages");

  // POWER8 with its 64K base pages: 1M and 16M pages are whole MiB.
  topology::Topology p8 = Recorded("ibm-power8nvl-2s-smt8-4xp100.xml");
  for (topology::NumaNode& node : p8.numa_nodes) {
    for (topology::HugePages& h : node.hugepages) h.count = 4;
  }
  PlacementOptions options = Named("p8");
  options.base_page_kib = 64;
  const ProviderTree p8tree = Build(p8, NodeOffer{}, options);
  const Provider& base = Named(p8tree, PageProviderName("p8", 0, 64));
  EXPECT_TRUE(base.traits.contains("CUSTOM_MEMORY_PAGE_SIZE_64"));
  EXPECT_EQ(Named(p8tree, PageProviderName("p8", 0, 16384)).inventories.at("MEMORY_MB"),
            Inv(64, 0, 16));
  EXPECT_EQ(Named(p8tree, PageProviderName("p8", 0, 1024)).inventories.at("MEMORY_MB"),
            Inv(4, 0, 1));
}

TEST(PlacementMappingCorpus, DevicesWithoutOneNumaNodeHangOffTheRoot) {
  TOPOLOGYD_REQUIRE_CORPUS();
  // The firmware of this Westmere-EX gives no PCI locality at all.
  const topology::Topology t = Recorded("intel-e7-4870-4s-interleaved-no-pci-locality.xml");
  NodeOffer every_device;
  every_device.device_selectors = {device::PciMatch{}};
  const ProviderTree tree = Build(t, every_device, Named("wsm"));
  int devices = 0;
  for (const Provider& p : tree.providers) {
    if (!p.traits.contains("COMPUTE_MANAGED_PCI_DEVICE")) continue;
    ++devices;
    EXPECT_EQ(p.parent_uuid, tree.root().uuid) << p.name;
  }
  EXPECT_EQ(devices, static_cast<int>(t.pci_devices.size()));
  EXPECT_GT(devices, 0);

  // Sub-NUMA clustering: an H100 reported local to two SNC nodes of its socket.
  topology::Topology spr = Recorded("intel-spr8480-2s-snc4-4xh100.xml");
  topology::PciDevice* h100 = nullptr;
  for (topology::PciDevice& dev : spr.pci_devices) {
    if (dev.vendor_id == 0x10de && dev.numa_nodes.size() == 1) h100 = &dev;
  }
  ASSERT_NE(h100, nullptr);
  const int home = h100->numa_nodes[0];
  const int sibling = home % 4 == 0 ? home + 1 : home - 1;
  h100->numa_nodes = {std::min(home, sibling), std::max(home, sibling)};
  const ProviderTree snc = Build(spr, NvidiaOffer(), Named("spr"));
  EXPECT_EQ(Named(snc, DeviceProviderName("spr", h100->busid)).parent_uuid, snc.root().uuid);
  ExpectWellFormed(spr, snc, "spr with a two-node device");
}

TEST(PlacementMappingCorpus, SparseNodeIdsNameTheProviders) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const topology::Topology t = Recorded("amd-opteron-4s-8numa-sparse-node-ids.xml");
  const ProviderTree tree = Build(t, NodeOffer{}, Named("opt"));
  for (int id : {0, 1, 2, 33, 34, 45, 72, 73}) EXPECT_TRUE(Has(tree, NumaProviderName("opt", id)));
}

}  // namespace
}  // namespace topologyd::placement
