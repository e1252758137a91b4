// `topoctl topology -o svg` and `topoctl allocations -o svg` against a real topologyd
// (MinimalConfig: 2 packages x 1 NUMA node x 4 cores x 2 threads = CPUs 0-15, CPU 0
// reserved), and their offline forms on the same configuration and state file, which must
// draw exactly what the daemon's answers draw.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"
#include "tests/support/svg_summary.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kUid[] = "5d0c1f0e-2222-4f4f-8a8a-00000000000b";

std::string GuaranteedPod() {
  return std::string(
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pinned\n  namespace: shop\n  uid: ") +
         kUid +
         "\nspec:\n  containers:\n  - name: app\n    image: busybox\n    resources:\n"
         "      limits: {cpu: \"4\", memory: 256Mi}\n";
}

class TopoctlPictureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.File("config.yaml");
    socket_ = dir_.File("topologyd.sock");
    WriteFile(config_, MinimalConfig(dir_.path()));
    daemon_.Start(config_, dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(socket_, seconds(30))) << ReadFile(dir_.File("log"));
  }

  CommandResult Topoctl(std::vector<std::string> args) {
    args.insert(args.begin(), {TopoctlBinary(), "--socket", socket_});
    return RunCommand(args);
  }

  // stdout of a command that must succeed.
  std::string Out(const std::vector<std::string>& args) {
    CommandResult r = Topoctl(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    return r.out;
  }

  TempDir dir_;
  std::string config_;
  std::string socket_;
  DaemonProcess daemon_;
};

TEST_F(TopoctlPictureTest, OnlineAndOfflineDrawTheSameNode) {
  TOPOLOGYD_REQUIRE_PYTHON();
  const std::string pod = dir_.File("pod.yaml");
  WriteFile(pod, GuaranteedPod());
  ASSERT_THAT(Out({"admit", "-f", pod, "-o", "json"}), HasSubstr("\"admitted\": true"));
  const nlohmann::json listing = nlohmann::json::parse(Out({"allocations", "-o", "json"}));
  const std::string pod_cpus = listing["pods"][0]["containers"][0]["cpus"].get<std::string>();

  // The machine alone: every CPU, no pods.
  const nlohmann::json machine = SvgSummary(Out({"topology", "-o", "svg"}));
  ASSERT_FALSE(machine.is_null());
  EXPECT_EQ(machine["cpus"].size(), 16u);
  EXPECT_EQ(machine["boxes"]["package"].size(), 2u);
  EXPECT_EQ(machine["boxes"]["numa"].size(), 2u);
  EXPECT_EQ(machine["boxes"]["core"].size(), 8u);
  EXPECT_TRUE(machine["legend_pods"].empty());

  // With allocations: CPU 0 reserved, the pod's 4 CPUs in its colour, one legend entry.
  const std::string online = Out({"allocations", "-o", "svg"});
  const nlohmann::json drawn = SvgSummary(online);
  ASSERT_FALSE(drawn.is_null());
  EXPECT_EQ(drawn["cpus"].size(), 16u);
  EXPECT_EQ(drawn["cpu_state"]["0"], "reserved");
  EXPECT_THAT(drawn["legend_pods"].get<std::vector<std::string>>(), ElementsAre(kUid));
  EXPECT_EQ(drawn["cpu_pod"].size(), 4u);
  for (auto it = drawn["cpu_pod"].begin(); it != drawn["cpu_pod"].end(); ++it) {
    EXPECT_EQ(it.value(), 0) << "CPU " << it.key();
    EXPECT_EQ(drawn["cpu_state"][it.key()], "pod");
  }
  EXPECT_THAT(online, HasSubstr("P1 shop/pinned: CPUs " + pod_cpus));

  // Offline, from the daemon's configuration and state file: the same listing and picture.
  const std::string state = dir_.File("state/state.json");
  EXPECT_EQ(nlohmann::json::parse(
                Out({"allocations", "--config", config_, "--state", state, "-o", "json"})),
            listing);
  EXPECT_EQ(Out({"allocations", "--config", config_, "--state", state, "-o", "svg"}), online);
  EXPECT_EQ(Out({"topology", "--synthetic", "pack:2 numa:1 core:4 pu:2", "-o", "svg"}),
            Out({"topology", "-o", "svg"}));

  // Offline without a state file: the empty node.
  const nlohmann::json empty = SvgSummary(Out({"allocations", "--config", config_, "-o", "svg"}));
  ASSERT_FALSE(empty.is_null());
  EXPECT_TRUE(empty["legend_pods"].empty());
  EXPECT_TRUE(empty["cpu_pod"].empty());
  EXPECT_EQ(empty["cpu_state"]["0"], "reserved");
  EXPECT_EQ(empty["cpu_state"]["5"], "shared");

  // --topology draws another machine under the same configuration: 8 CPUs, a CPU-less node
  // and two GPUs.
  const nlohmann::json other =
      SvgSummary(Out({"allocations", "--config", config_, "--topology",
                      std::string(TOPOLOGYD_SOURCE_DIR) +
                          "/tests/unit/topology/testdata/two_packages_hbm_disallowed.xml",
                      "-o", "svg"}));
  ASSERT_FALSE(other.is_null());
  EXPECT_EQ(other["cpus"].size(), 8u);
  EXPECT_EQ(other["boxes"]["numa"].size(), 3u);
  EXPECT_EQ(other["devices"].size(), 2u);
  EXPECT_EQ(other["cpu_state"]["0"], "reserved");
}

TEST_F(TopoctlPictureTest, SvgOnlyWhereThereIsAPictureAndBadInputChangesNothing) {
  CommandResult r = Topoctl({"status", "-o", "svg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-o svg is not supported here"));
  EXPECT_TRUE(r.out.empty());

  const std::string bad_state = dir_.File("bad.json");
  WriteFile(bad_state, "{\"version\": 2, \"generation\": 1, \"checksum\": \"crc32c:00000000\"}");
  r = Topoctl({"allocations", "--config", config_, "--state", bad_state, "-o", "svg"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("topoctl: allocations: "));
  EXPECT_TRUE(r.out.empty());

  r = Topoctl({"allocations", "--config", config_, "--state", dir_.File("missing.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.json: cannot read: No such file or directory"));

  r = Topoctl({"allocations", "--state", bad_state});  // offline flags need --config
  EXPECT_EQ(r.exit_code, 2);
  r = Topoctl({"allocations", "--config", ""});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace topologyd::testing
