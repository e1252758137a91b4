// Runs tests/fixtures/take/kubelet_cases.json (kubelet's CPU-manager cases) through the real
// `topoctl take` binary: same CPUs chosen, same requests refused (exit 1, kubelet's reason).
#include <cstdio>
#include <fstream>
#include <string>

#include "lib/cpuset/cpuset.h"
#include "tests/unit/cpu/kubelet_topologies.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include <sys/wait.h>

namespace topologyd::cpu {
namespace {

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

std::string ShellQuote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

RunResult RunCommand(const std::string& command) {
  RunResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
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
    RunResult result = RunCommand(cmd);
    ++ran;
    if (c.contains("error")) {
      EXPECT_EQ(result.exit_code, 1) << name << "\n" << result.output;
      EXPECT_NE(result.output.find(c["error"].get<std::string>()), std::string::npos)
          << name << "\n"
          << result.output;
      continue;
    }
    ASSERT_EQ(result.exit_code, 0) << name << "\n" << result.output;
    std::string out = result.output;
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
      ShellQuote(binary) + " take --topology " + ShellQuote(topo) + " --available 0-11 --count 2";
  // --output json prints {"cpus": LIST}.
  RunResult json = RunCommand(ShellQuote(binary) + " --output json take --topology " +
                              ShellQuote(topo) + " --available 0-11 --count 2");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output), nlohmann::json({{"cpus", "0,6"}}));
  // --cpu-group-size without distribute-cpus-across-numa is bad usage.
  EXPECT_EQ(RunCommand(base + " --cpu-group-size 2").exit_code, 2);
  // An option kubelet does not have (only proposed) is refused.
  RunResult proposal = RunCommand(base + " --option scale-delay-time=10s");
  EXPECT_EQ(proposal.exit_code, 1);
  EXPECT_NE(proposal.output.find("unknown CPU Manager Policy option"), std::string::npos);
  // Incompatible options name both.
  RunResult both =
      RunCommand(base + " --option full-pcpus-only --option distribute-cpus-across-cores");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.output.find("full-pcpus-only and distribute-cpus-across-cores"),
            std::string::npos);
  // Malformed lists and unknown NUMA ids are bad usage.
  EXPECT_EQ(RunCommand(base + " --affinity 7").exit_code, 2);
  EXPECT_EQ(RunCommand(ShellQuote(binary) + " take --topology " + ShellQuote(topo) +
                       " --available 0-x --count 2")
                .exit_code,
            2);
  // Too many CPUs: kubelet's reason.
  RunResult many = RunCommand(ShellQuote(binary) + " take --topology " + ShellQuote(topo) +
                              " --available 0-3 --count 8");
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_NE(many.output.find("not enough cpus available to satisfy request: requested=8, "
                             "available=4"),
            std::string::npos)
      << many.output;
}

}  // namespace
}  // namespace topologyd::cpu
