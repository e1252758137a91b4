// Cross-checks the `topoctl topology` JSON of a few recorded machines against hwloc's own
// command-line tools (hwloc-calc for a node's PUs, hwloc-info for its local memory).
#include <string>

#include "gtest/gtest.h"

#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_json.h"
#include "tests/corpus/corpus_util.h"
#include "tests/support/require_component.h"
#include "tests/support/shell.h"

namespace topologyd::topology {
namespace {

using testing::SharedTopologies;
using topologyd::testing::RunShell;
using topologyd::testing::ShellQuote;

// PU OS indexes of NUMA node `id` as hwloc-calc prints them ("0,1,2"), as a CpuSet.
CpuSet HwlocNodeCpus(const std::string& file, int id) {
  topologyd::testing::ShellResult result = RunShell("hwloc-calc --input " + ShellQuote(file) +
                                                    " -p -I pu --po node:" + std::to_string(id));
  EXPECT_EQ(result.exit_code, 0) << result.out;
  CpuSet cpus;
  size_t start = 0;
  std::string text = result.out;
  while (start < text.size()) {
    size_t end = text.find_first_of(",\n", start);
    if (end == std::string::npos) end = text.size();
    if (end > start) cpus.Add(std::stoi(text.substr(start, end - start)));
    start = end + 1;
  }
  return cpus;
}

uint64_t HwlocNodeMemory(const std::string& file, int id) {
  topologyd::testing::ShellResult result =
      RunShell("hwloc-info --input " + ShellQuote(file) + " -p node:" + std::to_string(id));
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const std::string key = "local memory = ";
  size_t at = result.out.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no local memory in: " << result.out;
    return 0;
  }
  return std::stoull(result.out.substr(at + key.size()));
}

TEST(TopologyHwlocToolsTest, PerNodeCpusAndMemoryMatchHwlocTools) {
  TOPOLOGYD_REQUIRE_CORPUS();
  if (RunShell("command -v hwloc-calc && command -v hwloc-info").exit_code != 0) {
    SKIP_OR_FAIL() << "hwloc-calc / hwloc-info not installed (Debian package hwloc)";
  }
  for (const char* name :
       {"amd-opteron-4s-8numa-sparse-node-ids.xml", "intel-gold6230-2s-snc2-memside-cache.xml",
        "intel-xeonmax9462-2s-snc4-hbm-flat.xml", "ibm-power9-ac922-6xv100-gpumem-numa.xml",
        "amd-threadripper2990wx-memoryless-dies-2gpu.xml"}) {
    const std::string file = (SharedTopologies() / name).string();
    SCOPED_TRACE(file);
    absl::StatusOr<Topology> topology = LoadTopology(TopologySource::Xml(file));
    ASSERT_TRUE(topology.ok()) << topology.status();
    const nlohmann::json json = TopologyToJson(*topology);
    CpuSet cpus_of_earlier_nodes;
    for (const auto& node : json["numa_nodes"]) {
      const int id = node["id"].get<int>();
      SCOPED_TRACE("node " + std::to_string(id));
      absl::StatusOr<CpuSet> ours = CpuSet::Parse(node["cpus"].get<std::string>());
      ASSERT_TRUE(ours.ok());
      const CpuSet theirs = HwlocNodeCpus(file, id);
      if (ours->IsEmpty()) {
        // A memory-only node: hwloc gives it no CPUs or those of a CPU node it sits beside.
        EXPECT_TRUE(theirs.IsSubsetOf(cpus_of_earlier_nodes)) << theirs;
      } else {
        EXPECT_EQ(*ours, theirs);
      }
      cpus_of_earlier_nodes.AddAll(*ours);
      EXPECT_EQ(node["memory_bytes"].get<uint64_t>(), HwlocNodeMemory(file, id));
    }
  }
}

}  // namespace
}  // namespace topologyd::topology
