// Runs tests/fixtures/take/kubelet_cases.json (kubelet's CPU-manager cases) through the real
// `topoctl take` binary: same CPUs chosen, same requests refused (exit 1, kubelet's reason).
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/cpuset/cpuset.h"
#include "tests/support/shell.h"
#include "tests/unit/cpu/kubelet_topologies.h"

namespace topologyd::cpu {
namespace {

using topologyd::testing::ShellQuote;

// stdout and stderr together, as a person at a terminal sees them.
topologyd::testing::ShellResult RunCommand(const std::string& command) {
  return topologyd::testing::RunShell(command + " 2>&1");
}

TEST(TopoctlTakeTest, KubeletCasesThroughTheBinary) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  std::ifstream in(std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/take/kubelet_cases.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fixture = nlohmann::json::parse(in);
  const std::string binary = std::string(TOPOLOGYD_BINARY_DIR) + "/tools/topoctl/topoctl";
  int ran = 0;
  for (const nlohmann::json& c : fixture.at("cases")) {
    std::string cmd =
        ShellQuote(binary) + " take --topology " +
        ShellQuote(testing::SharedTopologiesDir() + "/" + c.at("topology").get<std::string>()) +
        " --available " + ShellQuote(c.at("available").get<std::string>()) + " --count " +
        std::to_string(c.at("count").get<int>());
    if (c.contains("reserved")) cmd += " --reserved " + ShellQuote(c["reserved"]);
    if (c.contains("options")) {
      for (const auto& option : c["options"]) cmd += " --option " + ShellQuote(option);
    }
    if (c.contains("cpu_group_size")) {
      cmd += " --cpu-group-size " + std::to_string(c["cpu_group_size"].get<int>());
    }
    if (c.contains("affinity")) cmd += " --affinity " + ShellQuote(c["affinity"]);
    const std::string name =
        c.at("name").get<std::string>() + " [" + c.value("rule", std::string()) + "]";
    topologyd::testing::ShellResult result = RunCommand(cmd);
    ++ran;
    if (c.contains("error")) {
      EXPECT_EQ(result.exit_code, 1) << name << "\n" << result.out;
      EXPECT_NE(result.out.find(c["error"].get<std::string>()), std::string::npos) << name << "\n"
                                                                                   << result.out;
      continue;
    }
    ASSERT_EQ(result.exit_code, 0) << name << "\n" << result.out;
    std::string out = result.out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    EXPECT_EQ(out, testing::Cpus(c.at("expect").get<std::string>()).ToString()) << name;
  }
  EXPECT_GT(ran, 60);
}

TEST(TopoctlTakeTest, UsageAndJson) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::string binary = std::string(TOPOLOGYD_BINARY_DIR) + "/tools/topoctl/topoctl";
  const std::string topo = testing::SharedTopologiesDir() + "/kubelet-test/topoDualSocketHT.xml";
  const std::string base =
      ShellQuote(binary) + " take --input " + ShellQuote(topo) + " --available 0-11 --count 2";
  // --output json prints {"cpus": LIST}; --topology is the former name of --input.
  topologyd::testing::ShellResult json =
      RunCommand(ShellQuote(binary) + " --output json take --topology " + ShellQuote(topo) +
                 " --available 0-11 --count 2");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out), nlohmann::json({{"cpus", "0,6"}}));
  // --cpu-group-size without distribute-cpus-across-numa is bad usage.
  EXPECT_EQ(RunCommand(base + " --cpu-group-size 2").exit_code, 2);
  // An option kubelet does not have (only proposed) is a bad flag value: bad usage.
  topologyd::testing::ShellResult proposal = RunCommand(base + " --option scale-delay-time=10s");
  EXPECT_EQ(proposal.exit_code, 2);
  EXPECT_NE(proposal.out.find("unknown CPU Manager Policy option"), std::string::npos);
  // Incompatible options name both.
  topologyd::testing::ShellResult both =
      RunCommand(base + " --option full-pcpus-only --option distribute-cpus-across-cores");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("full-pcpus-only and distribute-cpus-across-cores"), std::string::npos);
  // Malformed lists and unknown NUMA ids are bad usage.
  EXPECT_EQ(RunCommand(base + " --affinity 7").exit_code, 2);
  EXPECT_EQ(RunCommand(ShellQuote(binary) + " take --topology " + ShellQuote(topo) +
                       " --available 0-x --count 2")
                .exit_code,
            2);
  // CPUs the machine does not have are bad usage, not "available".
  topologyd::testing::ShellResult absent = RunCommand(
      ShellQuote(binary) + " take --topology " + ShellQuote(topo) + " --available 0-20 --count 2");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.out.find("--available names CPUs 12-20, which the topology does not have"),
            std::string::npos)
      << absent.out;
  EXPECT_EQ(RunCommand(base + " --reserved 30").exit_code, 2);
  // So are CPUs outside every NUMA node (memory-less dies), which kubelet never sees.
  const std::string dies =
      testing::SharedTopologiesDir() + "/amd-threadripper2990wx-memoryless-dies-2gpu.xml";
  topologyd::testing::ShellResult no_numa = RunCommand(
      ShellQuote(binary) + " take --topology " + ShellQuote(dies) + " --available 16-31 --count 2");
  EXPECT_EQ(no_numa.exit_code, 2);
  EXPECT_NE(no_numa.out.find("which belong to no NUMA node"), std::string::npos) << no_numa.out;
  // A synthetic machine instead of a file; not both.
  topologyd::testing::ShellResult synthetic =
      RunCommand(ShellQuote(binary) +
                 " take --synthetic 'pack:2 core:2 pu:2' --available 0-7 "
                 "--count 2");
  EXPECT_EQ(synthetic.exit_code, 0) << synthetic.out;
  EXPECT_EQ(RunCommand(base + " --synthetic 'pack:2 core:2 pu:2'").exit_code, 2);
  EXPECT_EQ(RunCommand(ShellQuote(binary) + " take --available 0-3 --count 2").exit_code, 2);
  // --output yaml prints the same document.
  topologyd::testing::ShellResult yaml =
      RunCommand(ShellQuote(binary) + " --output yaml take --topology " + ShellQuote(topo) +
                 " --available 0-11 --count 2");
  ASSERT_EQ(yaml.exit_code, 0) << yaml.out;
  EXPECT_EQ(yaml.out, "cpus: \"0,6\"\n");
  // Too many CPUs: kubelet's reason.
  topologyd::testing::ShellResult many = RunCommand(
      ShellQuote(binary) + " take --topology " + ShellQuote(topo) + " --available 0-3 --count 8");
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_NE(many.out.find("not enough cpus available to satisfy request: requested=8, "
                          "available=4"),
            std::string::npos)
      << many.out;
}

}  // namespace
}  // namespace topologyd::cpu
