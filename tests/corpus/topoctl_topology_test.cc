// `topoctl topology` as a user runs it: exit codes, stderr messages and both output forms.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/corpus/corpus_util.h"
#include "tests/support/shell.h"

namespace topologyd::topology {
namespace {

using ::testing::HasSubstr;
using topologyd::testing::RunShell;
using topologyd::testing::ShellQuote;

std::string Topoctl(const std::string& arguments) {
  return topologyd::testing::TopoctlPath() + " " + arguments;
}

TEST(TopoctlTopologyTest, SyntheticJson) {
  topologyd::testing::ShellResult result =
      RunShell(Topoctl("topology --synthetic 'pack:2 numa:2 core:4 pu:2' --output json"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["packages"], 2);
  EXPECT_EQ(json["cores"], 16);
  EXPECT_EQ(json["cpus"], 32);
  ASSERT_EQ(json["numa_nodes"].size(), 4u);
  EXPECT_EQ(json["numa_nodes"][1]["cpus"], "8-15");
}

TEST(TopoctlTopologyTest, GlobalOutputFlagBeforeTheCommandWorksToo) {
  topologyd::testing::ShellResult result =
      RunShell(Topoctl("--output json topology --synthetic 'pack:1 core:2 pu:1'"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(nlohmann::json::parse(result.out)["cpus"], 2);
}

TEST(TopoctlTopologyTest, TableIsTheDefault) {
  topologyd::testing::ShellResult result =
      RunShell(Topoctl("topology --synthetic 'pack:2 numa:1 pu:2'"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out, HasSubstr("NUMA node 1\n  cpus       2-3\n"));
}

TEST(TopoctlTopologyTest, LiveFlagDiscoversThisMachine) {
  topologyd::testing::ShellResult result = RunShell(Topoctl("topology --live --output json"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_GT(nlohmann::json::parse(result.out)["cpus"].get<int>(), 0);
}

TEST(TopoctlTopologyTest, BothSourcesIsBadUsage) {
  topologyd::testing::ShellResult result =
      RunShell(Topoctl("topology --input x.xml --synthetic 'pu:2' 2>&1"));
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_THAT(result.out, HasSubstr("excludes"));
}

TEST(TopoctlTopologyTest, LoadFailuresExitOneWithAMessage) {
  topologyd::testing::ShellResult missing =
      RunShell(Topoctl("topology --input /nonexistent/machine.xml 2>&1 >/dev/null"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/machine.xml does not exist"));

  topologyd::testing::ShellResult synthetic =
      RunShell(Topoctl("topology --synthetic 'pack:2 bogus:3' 2>&1 >/dev/null"));
  EXPECT_EQ(synthetic.exit_code, 1);
  EXPECT_THAT(synthetic.out, HasSubstr("invalid hwloc synthetic topology \"pack:2 bogus:3\""));
}

TEST(TopoctlTopologyTest, RecordedMachineAsJson) {
  TOPOLOGYD_REQUIRE_CORPUS();
  const std::string file =
      (testing::SharedTopologies() / "intel-xeonmax9462-2s-snc4-hbm-flat.xml").string();
  topologyd::testing::ShellResult result =
      RunShell(Topoctl("topology --input " + ShellQuote(file) + " --output json"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  nlohmann::json json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["numa_nodes"].size(), 16u);
  EXPECT_EQ(json["numa_nodes"][8]["id"], 8);
  EXPECT_EQ(json["numa_nodes"][8]["cpus"], "");
  EXPECT_EQ(json["numa_nodes"][0]["distances"].size(), 16u);
}

}  // namespace
}  // namespace topologyd::topology
