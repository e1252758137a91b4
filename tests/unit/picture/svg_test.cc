// The SVG pictures: well-formed XML (read back with xml.etree), one element per CPU and per
// pod, and the allocations drawn where they are; on hand-built and recorded machines.
#include "lib/picture/svg.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/picture/palette.h"
#include "lib/topology/hwloc_source.h"
#include "tests/corpus/corpus_util.h"
#include "tests/support/svg_summary.h"
#include "tests/unit/picture/machines.h"

namespace topologyd::picture {
namespace {

using testing::Device;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::Machine;
using topologyd::testing::SvgSummary;

std::vector<int> CpuIds(const topology::Topology& m) {
  std::vector<int> ids;
  for (const auto& c : m.cpus) ids.push_back(c.id);
  return ids;
}

// The CPU elements' ids, ascending (the document has them in drawing order).
std::vector<int> DrawnCpus(const nlohmann::json& summary) {
  std::vector<int> ids = summary["cpus"].get<std::vector<int>>();
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(PaletteTest, ThirtySixPodsLookDifferent) {
  std::set<std::pair<std::string, int>> styles;
  for (int i = 0; i < kPodStyles; ++i) {
    const PodStyle s = StyleOfPod(i);
    styles.insert({std::string(s.colour), static_cast<int>(s.fill)});
  }
  EXPECT_EQ(styles.size(), static_cast<size_t>(kPodStyles));
  EXPECT_EQ(StyleOfPod(kPodStyles).colour, StyleOfPod(0).colour);
}

TEST(SvgTest, MachineAlone) {
  TOPOLOGYD_REQUIRE_PYTHON();
  topology::Topology m = Machine(2, 2, 4, 2);
  m.numa_nodes.push_back({.id = 4, .memory_bytes = uint64_t{8} << 30});
  m.pci_devices = {Device("0000:3b:00.0", {1})};
  const std::string svg = MachineSvg(m);
  EXPECT_THAT(svg, ::testing::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
  const nlohmann::json s = SvgSummary(svg);
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["root"], "{http://www.w3.org/2000/svg}svg");
  EXPECT_THAT(DrawnCpus(s), ElementsAreArray(CpuIds(m)));
  EXPECT_TRUE(s["cpu_has_title"].get<bool>());
  EXPECT_EQ(s["cpu_state"]["5"], "");
  EXPECT_EQ(s["cpu_numa"]["5"], "numa-0");
  EXPECT_EQ(s["cpu_numa"]["12"], "numa-1");
  EXPECT_EQ(s["cpu_numa"]["28"], "numa-3");
  EXPECT_THAT(s["boxes"]["numa"].get<std::vector<std::string>>(),
              ::testing::UnorderedElementsAre("numa-0", "numa-1", "numa-2", "numa-3", "numa-4"));
  EXPECT_EQ(s["boxes"]["core"].size(), 16u);
  EXPECT_EQ(s["boxes"]["package"].size(), 2u);
  EXPECT_EQ(s["devices"]["0000:3b:00.0"]["numa"], "numa-1");
  EXPECT_TRUE(s["legend_pods"].empty());
}

TEST(SvgTest, AllocationsInOneColourPerPodWithALegend) {
  TOPOLOGYD_REQUIRE_PYTHON();
  topology::Topology m = Machine(2, 1, 4, 2);
  m.pci_devices = {Device("0000:3b:00.0", {0}), Device("0000:af:00.0", {1})};
  AllocationsDrawing a;
  a.reserved = CpuSet{0, 1};
  a.shared_pool = CpuSet::Range(2, 7).Union(CpuSet{14, 15});
  a.pods = {
      {.uid = "uid-web",
       .namespace_name = "shop",
       .name = "web <&> \"x\"",
       .containers = {{.name = "app",
                       .exclusive_cpus = CpuSet::Range(8, 11),
                       .memory_numa = {1},
                       .devices = {{"nvidia.com/gpu", "0000:AF:00.0"}}},
                      {.name = "side", .exclusive_cpus = CpuSet{12}}}},
      {.uid = "uid-batch",
       .namespace_name = "batch",
       .name = std::string("bad\xFFname"),
       .containers = {{.name = "shared"}}},
      {.uid = "uid-gpu",
       .namespace_name = "ml",
       .name = "train",
       .containers = {{.name = "t",
                       .memory_numa = {0, 1},
                       .devices = {{"example.com/fpga", "fpga-7"}}}}},
  };
  const std::string svg = MachineSvg(m, &a);
  const nlohmann::json s = SvgSummary(svg);
  ASSERT_FALSE(s.is_null());
  EXPECT_THAT(DrawnCpus(s), ElementsAreArray(CpuIds(m)));
  EXPECT_THAT(s["legend_pods"].get<std::vector<std::string>>(),
              ElementsAre("uid-web", "uid-batch", "uid-gpu"));
  EXPECT_EQ(s["cpu_state"]["0"], "reserved");
  EXPECT_EQ(s["cpu_state"]["1"], "reserved");
  EXPECT_EQ(s["cpu_state"]["2"], "shared");
  EXPECT_EQ(s["cpu_state"]["13"], "other");
  std::map<std::string, int> owned;
  for (auto it = s["cpu_pod"].begin(); it != s["cpu_pod"].end(); ++it) {
    owned[it.key()] = it.value().get<int>();
  }
  EXPECT_EQ(owned,
            (std::map<std::string, int>{{"8", 0}, {"9", 0}, {"10", 0}, {"11", 0}, {"12", 0}}));
  EXPECT_EQ(s["devices"]["0000:af:00.0"]["pod"], 0);
  EXPECT_TRUE(s["devices"]["0000:3b:00.0"]["pod"].is_null());
  EXPECT_THAT(
      s["memory"].get<std::vector<std::vector<int>>>(),
      ::testing::UnorderedElementsAre(ElementsAre(0, 1), ElementsAre(2, 0), ElementsAre(2, 1)));
  // Markup in names is escaped, not interpreted; the legend says what each pod holds.
  EXPECT_THAT(svg, HasSubstr("P1 shop/web &lt;&amp;&gt; &quot;x&quot;: CPUs 8-12 · memory NUMA 1"));
  EXPECT_THAT(svg, HasSubstr("P2 batch/bad\xEF\xBF\xBDname: shared pool"));
  EXPECT_THAT(svg, HasSubstr("example.com/fpga=fpga-7"));
  EXPECT_THAT(svg, HasSubstr("reserved CPUs: 0-1"));
  EXPECT_THAT(svg, HasSubstr("CPU 9 · core 8 · package 1 · die 0 · NUMA 1 · L3 8 — shop/web"));
}

TEST(SvgTest, PodsBeyondThePaletteGetPatterns) {
  TOPOLOGYD_REQUIRE_PYTHON();
  const topology::Topology m = Machine(2, 4, 16, 2);  // 256 CPUs
  AllocationsDrawing a;
  a.reserved = CpuSet{0};
  for (int i = 0; i < 50; ++i) {
    a.pods.push_back({.uid = "uid-" + std::to_string(i),
                      .namespace_name = "ns",
                      .name = "pod-" + std::to_string(i),
                      .containers = {{.name = "c",
                                      .exclusive_cpus = CpuSet::Range(2 + 4 * i, 5 + 4 * i),
                                      .memory_numa = {i % 8}}}});
  }
  const std::string svg = MachineSvg(m, &a);
  const nlohmann::json s = SvgSummary(svg);
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["legend_pods"].size(), 50u);
  EXPECT_EQ(s["cpu_pod"].size(), 200u);
  EXPECT_EQ(s["cpu_pod"]["201"], 49);
  EXPECT_EQ(s["memory"].size(), 50u);  // every pod on its node, shown or under "+N"
  EXPECT_THAT(svg, HasSubstr("<pattern id=\"pod-style-12\""));
  EXPECT_THAT(svg, HasSubstr("<pattern id=\"pod-style-35\""));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("<pattern id=\"pod-style-36\"")));
  EXPECT_THAT(svg, HasSubstr("style=\"fill:url(#pod-style-13)\""));
}

TEST(SvgTest, EveryRecordedMachineParsesWithOneElementPerCpu) {
  TOPOLOGYD_REQUIRE_CORPUS();
  TOPOLOGYD_REQUIRE_PYTHON();
  const auto files = topology::testing::XmlFilesIn(topology::testing::SharedTopologies());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    absl::StatusOr<topology::Topology> m =
        topology::LoadTopology(topology::TopologySource::Xml(file.string()));
    ASSERT_TRUE(m.ok()) << m.status();
    // Every pod gets a CPU of its own where there are enough, plus memory and a device.
    AllocationsDrawing a;
    a.reserved = CpuSet{m->cpus.front().id};
    for (size_t i = 1; i < m->cpus.size() && i <= 20; ++i) {
      ContainerDrawing c{.name = "c", .exclusive_cpus = CpuSet{m->cpus[i].id}};
      if (m->cpus[i].numa_id >= 0) c.memory_numa = {m->cpus[i].numa_id};
      if (i - 1 < m->pci_devices.size()) c.devices = {{"r", m->pci_devices[i - 1].busid}};
      a.pods.push_back({.uid = "u" + std::to_string(i),
                        .namespace_name = "n",
                        .name = "p" + std::to_string(i),
                        .containers = {c}});
    }
    const nlohmann::json s = SvgSummary(MachineSvg(*m, &a));
    ASSERT_FALSE(s.is_null());
    EXPECT_THAT(DrawnCpus(s), ElementsAreArray(CpuIds(*m)));
    EXPECT_EQ(s["legend_pods"].size(), a.pods.size());
    EXPECT_EQ(s["cpu_pod"].size(), a.pods.size());
    EXPECT_EQ(s["devices"].size(), m->pci_devices.size());
    size_t numa_boxes = 0;
    for (const auto& id : s["boxes"]["numa"]) numa_boxes += id != "numa-none";
    EXPECT_EQ(numa_boxes, m->numa_nodes.size());
  }
}

}  // namespace
}  // namespace topologyd::picture
