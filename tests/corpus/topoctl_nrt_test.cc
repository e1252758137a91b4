// `topoctl nrt` offline as a user runs it, and its output checked against the
// NodeResourceTopology CRD's v1alpha2 schema (tests/fixtures/nrt) as `kubectl apply` would have
// the API server check it: on a synthetic machine always, and on every recorded machine of the
// shared topology folder when it is there.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/corpus/corpus_util.h"
#include "tests/support/require_component.h"
#include "tests/support/shell.h"

namespace topologyd::topology {
namespace {

using ::testing::HasSubstr;
using topologyd::testing::RunShell;
using topologyd::testing::ShellQuote;
using topologyd::testing::ShellResult;

const std::string kFixtures = std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/nrt/";

// Static CPU policy with one reserved CPU, single-numa-node at pod scope, the Static memory
// manager with 100Mi reserved on NUMA node `numa` (the machine's first: ids may be sparse),
// and a pool of every 3D controller (class 0302) the machine has.
std::string Config(int numa) {
  return "cpuManagerPolicy: static\n"
         "cpuReservedCount: 1\n"
         "topologyManagerPolicy: single-numa-node\n"
         "topologyManagerScope: pod\n"
         "memoryManagerPolicy: Static\n"
         "reservedMemory: [{numaNode: " +
         std::to_string(numa) +
         ", limits: {memory: 100Mi}}]\n"
         "devices:\n"
         "- resourceName: example.com/gpu\n"
         "  pci: {class: \"0302\"}\n";
}

class TopoctlNrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = std::filesystem::temp_directory_path() /
              ("topoctl-nrt-test-" + std::to_string(::getpid()) + ".yaml");
    UseFirstNuma(0);
  }
  void UseFirstNuma(int numa) const { std::ofstream(config_) << Config(numa); }
  void TearDown() override { std::filesystem::remove(config_); }

  ShellResult Topoctl(const std::string& arguments) const {
    return RunShell(topologyd::testing::TopoctlPath() + " " + arguments);
  }
  // Runs `topoctl nrt` with `machine` (--input/--synthetic ...), then the schema check on its
  // YAML output. The check's own output on failure.
  void ExpectValid(const std::string& machine) const {
    ShellResult nrt = Topoctl("nrt " + machine + " --config " + ShellQuote(config_.string()) +
                              " --node-name corpus-node");
    ASSERT_EQ(nrt.exit_code, 0) << machine << ": " << nrt.err;
    const std::string output = config_.string() + ".nrt.yaml";
    std::ofstream(output) << nrt.out;
    ShellResult check =
        RunShell("/usr/bin/python3 " + ShellQuote(kFixtures + "validate_nrt.py") + " " +
                 ShellQuote(kFixtures + "crd_v1alpha2_schema.yaml") + " " + ShellQuote(output));
    std::filesystem::remove(output);
    if (check.exit_code == 77) SKIP_OR_FAIL() << "python3-jsonschema or python3-yaml missing";
    EXPECT_EQ(check.exit_code, 0) << machine << ":\n" << check.err << nrt.out;
  }
  std::filesystem::path config_;
};

#define REQUIRE_PYTHON()                                                             \
  do {                                                                               \
    if (!std::filesystem::exists("/usr/bin/python3")) {                              \
      SKIP_OR_FAIL() << "/usr/bin/python3 not found: the CRD schema check needs it"; \
    }                                                                                \
  } while (false)

TEST_F(TopoctlNrtTest, SyntheticMachineIsValidAgainstTheCrd) {
  REQUIRE_PYTHON();
  ExpectValid("--synthetic 'pack:2 numa:2 core:4 pu:2'");
}

TEST_F(TopoctlNrtTest, JsonHasOneZonePerNumaNodeAndTheAttributes) {
  ShellResult r = Topoctl("nrt --synthetic 'pack:2 numa:2 core:4 pu:2' --config " +
                          ShellQuote(config_.string()) + " --node-name n1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metadata"]["name"], "n1");
  ASSERT_EQ(j["zones"].size(), 4U);
  EXPECT_EQ(j["zones"][3]["name"], "node-3");
  EXPECT_EQ(j["topologyPolicies"][0], "SingleNUMANodePodLevel");
  EXPECT_EQ(j["attributes"][0]["value"], "single-numa-node");
  EXPECT_EQ(j["attributes"][1]["value"], "pod");
  EXPECT_EQ(j["attributes"][2],
            (nlohmann::json{{"name", "topologyManagerMaxNUMANodes"}, {"value", "64"}}));
  // An empty node: the fingerprint of no pods, over every pod topologyd holds.
  EXPECT_EQ(j["attributes"][3]["value"], "pfp0v001ef46db3751d8e999");
  EXPECT_EQ(j["attributes"][4],
            (nlohmann::json{{"name", "nodeTopologyPodsFingerprintMethod"}, {"value", "all"}}));
  // One CPU reserved (on node 0): 8 CPUs, 7 to give.
  EXPECT_EQ(j["zones"][0]["resources"][0],
            (nlohmann::json{
                {"name", "cpu"}, {"capacity", "8"}, {"allocatable", "7"}, {"available", "7"}}));
}

TEST_F(TopoctlNrtTest, BadUsageIsRefused) {
  ShellResult r = Topoctl("nrt --synthetic 'pack:1 core:2 pu:1'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs both"));
  r = Topoctl("nrt --synthetic 'pack:1 core:2 pu:1' --config " + ShellQuote(config_.string()) +
              " --node-name Bad_Name");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--node-name"));
}

TEST_F(TopoctlNrtTest, RecordedMachinesAreValidAgainstTheCrd) {
  TOPOLOGYD_REQUIRE_CORPUS();
  REQUIRE_PYTHON();
  const auto files = testing::XmlFilesIn(testing::SharedTopologies());
  ASSERT_FALSE(files.empty());
  for (const std::filesystem::path& xml : files) {
    SCOPED_TRACE(xml.filename().string());
    ShellResult topology =
        Topoctl("topology --input " + ShellQuote(xml.string()) + " --output json");
    ASSERT_EQ(topology.exit_code, 0) << topology.err;
    UseFirstNuma(nlohmann::json::parse(topology.out)["numa_nodes"][0]["id"].get<int>());
    ExpectValid("--input " + ShellQuote(xml.string()));
  }
}

}  // namespace
}  // namespace topologyd::topology
