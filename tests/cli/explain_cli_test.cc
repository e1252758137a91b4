// `topoctl explain` through the real binary: the offline form on shared hwloc topologies with a
// generated config, JSON shape, table output, exit codes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/support/require_component.h"
#include "tests/support/shell.h"

namespace topologyd::admission {
namespace {

using ::testing::HasSubstr;

topologyd::testing::ShellResult RunTopoctl(const std::string& args) {
  return topologyd::testing::RunShell(topologyd::testing::TopoctlPath() + " " + args);
}

class ExplainCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(TOPOLOGYD_SHARED_TOPOLOGIES)) {
      CORPUS_SKIP_OR_FAIL() << "shared topologies not found at " << TOPOLOGYD_SHARED_TOPOLOGIES;
    }
    config_ = (std::filesystem::temp_directory_path() /
               ("topologyd-explain-" + std::to_string(::getpid()) + ".yaml"))
                  .string();
    std::ofstream(config_) << "cpuManagerPolicy: static\n"
                              "reservedSystemCPUs: \"0\"\n"
                              "topologyManagerPolicy: single-numa-node\n"
                              "memoryManagerPolicy: Static\n"
                              "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
                              "devices:\n"
                              "  - resourceName: nvidia.com/gpu\n"
                              "    pci: {vendor: \"10de\", class: \"0302\"}\n";
  }
  void TearDown() override {
    if (!config_.empty()) std::filesystem::remove(config_);
  }
  std::string Args(const std::string& pod, const std::string& machine) const {
    return "explain -f " + std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/" + pod +
           " --input " + std::string(TOPOLOGYD_SHARED_TOPOLOGIES) + "/" + machine + " --config " +
           config_;
  }
  std::string config_;
};

TEST_F(ExplainCliTest, AdmittedPodAsJson) {
  topologyd::testing::ShellResult r = RunTopoctl(
      "--output json " + Args("gpu-inference.yaml", "intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["admitted"], true);
  EXPECT_EQ(doc["policy"], "single-numa-node");
  ASSERT_EQ(doc["containers"].size(), 3U);
  EXPECT_EQ(doc["containers"][0]["name"], "fetch-model");
  const nlohmann::json& server = doc["containers"][1];
  EXPECT_EQ(server["exclusive"], true);
  EXPECT_EQ(server["numa_affinity"].size(), 1U);
  EXPECT_EQ(server["memory_numa"], server["numa_affinity"]);
  EXPECT_EQ(server["devices"]["nvidia.com/gpu"].size(), 2U);
  EXPECT_EQ(doc["containers"][2]["exclusive"], false);
  // One merge per container, in admission order.
  ASSERT_EQ(doc["hints"].size(), 3U);
  EXPECT_EQ(doc["hints"][1]["container"], "server");
  EXPECT_TRUE(doc["hints"][1]["providers"]["devices"]["nvidia.com/gpu"]["upward_closed"]);
  EXPECT_EQ(doc["merged"][1]["affinity"], server["numa_affinity"]);
}

TEST_F(ExplainCliTest, RejectedPodAsTableExitsOne) {
  topologyd::testing::ShellResult r =
      RunTopoctl(Args("guaranteed-gpu.yaml", "intel-spr8480-2s-snc4-4xh100.xml"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, ::testing::StartsWith("refused: TopologyAffinityError: "));
  EXPECT_THAT(r.out, HasSubstr("\ncontainer trainer\nPROVIDER"));
  EXPECT_THAT(r.out, HasSubstr("merged    -               any not preferred, refused by the "
                               "topology manager\n"));
  EXPECT_THAT(r.out, HasSubstr("annotation topologyd.io/topology-policy=\"single-numa-node\" "
                               "ignored"));
}

// Offline, the manifest is bounded by the config's limits.containersPerPod, as the daemon on
// that config would bound it.
TEST_F(ExplainCliTest, OfflineFormBoundsContainersByTheConfig) {
  const std::string pod = "gpu-inference.yaml";  // three containers
  const std::string machine = "intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml";
  std::string base;
  {
    std::ifstream in(config_);
    base.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(config_) << base << "limits: {containersPerPod: 2}\n";
  topologyd::testing::ShellResult r = RunTopoctl(Args(pod, machine));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("spec.containers: 3 containers (init and app); this node admits at "
                               "most 2 per pod (limits.containersPerPod)"));
  std::ofstream(config_) << base << "limits: {containersPerPod: 3}\n";
  r = RunTopoctl(Args(pod, machine));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ExplainCliTest, OfflineFormNeedsTopologyAndConfig) {
  const std::string pod = std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/burstable.json";
  // Neither flag is the online form: with no daemon on that socket it fails, naming it.
  auto online = RunTopoctl("--socket /nonexistent/topologyd.sock explain -f " + pod);
  EXPECT_EQ(online.exit_code, 1);
  EXPECT_EQ(RunTopoctl("explain -f " + pod + " --config " + config_).exit_code, 2);
  EXPECT_EQ(RunTopoctl("explain --config " + config_).exit_code, 2);  // -f is required
  EXPECT_EQ(RunTopoctl(Args("bad-quantity.yaml", "intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml"))
                .exit_code,
            1);
}

}  // namespace
}  // namespace topologyd::admission
