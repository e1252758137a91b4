// A pod split over two NUMA nodes through a real topologyd and topoctl: `explain` shows the
// cells, `admit` takes each cell's CPUs on its node, a restart keeps them, and a pod the named
// node cannot hold is refused with the node and what it lacked. The machine is MinimalConfig's:
// NUMA node 0 has CPUs 0-7 (0 reserved), node 1 CPUs 8-15.
#include <csignal>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/cpuset/cpuset.h"
#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

// A Guaranteed pod of one container, `cell0` CPUs on NUMA node 1 and `cell1` on node 0.
std::string SplitPod(const std::string& uid, int cell0, int cell1) {
  return "apiVersion: v1\n"
         "kind: Pod\n"
         "metadata:\n"
         "  name: guest\n"
         "  namespace: vms\n"
         "  uid: " +
         uid +
         "\n"
         "  annotations:\n"
         "    topologyd.io/numa-nodes: \"2\"\n"
         "    topologyd.io/numa-placement: \"1,0\"\n"
         "    topologyd.io/numa-cpus.0: \"" +
         std::to_string(cell0) +
         "\"\n"
         "    topologyd.io/numa-cpus.1: \"" +
         std::to_string(cell1) +
         "\"\n"
         "spec:\n"
         "  containers:\n"
         "  - name: compute\n"
         "    image: busybox\n"
         "    resources:\n"
         "      limits: {cpu: \"" +
         std::to_string(cell0 + cell1) + "\", memory: 256Mi}\n";
}

std::set<int> CpuList(const std::string& text) {
  absl::StatusOr<CpuSet> set = CpuSet::Parse(text);
  EXPECT_TRUE(set.ok()) << "\"" << text << "\": " << set.status();
  if (!set.ok()) return {};
  const std::vector<int> ids = set->ToVector();
  return {ids.begin(), ids.end()};
}

class NumaSplitOnlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.File("config.yaml");
    socket_ = dir_.File("topologyd.sock");
    WriteFile(config_, MinimalConfig(dir_.path()));
    StartDaemon();
  }

  void StartDaemon() {
    daemon_.Start(config_, dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(socket_, seconds(30))) << ReadFile(dir_.File("log"));
  }

  CommandResult Topoctl(std::vector<std::string> args) {
    args.insert(args.begin(), {TopoctlBinary(), "--socket", socket_});
    return RunCommand(args);
  }

  TempDir dir_;
  std::string config_;
  std::string socket_;
  DaemonProcess daemon_;
};

TEST_F(NumaSplitOnlineTest, ExplainAdmitRestartAndRefuse) {
  const std::string pod =
      dir_.Write("guest.yaml", SplitPod("5f0c0d1e-2222-4a4a-9b9b-00000000000b", 4, 2));
  CommandResult r = Topoctl({"explain", "-f", pod});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NUMA split: cell 0 on NUMA node 1: 4 exclusive CPUs (8-11)"));
  EXPECT_THAT(r.out, HasSubstr("NUMA split: cell 1 on NUMA node 0: 2 exclusive CPUs"));

  r = Topoctl({"admit", "-f", pod, "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json admitted = nlohmann::json::parse(r.out);
  ASSERT_TRUE(admitted["admitted"].get<bool>()) << r.out;
  const nlohmann::json compute = admitted["containers"][0];
  const std::set<int> cpus = CpuList(compute["cpus"].get<std::string>());
  EXPECT_EQ(cpus, (std::set<int>{2, 3, 8, 9, 10, 11})) << r.out;
  EXPECT_EQ(compute["numa_affinity"], nlohmann::json::array({0, 1}));

  // A restart restores the split from the checkpoint: the same answer for the same uid.
  daemon_.Signal(SIGTERM);
  ASSERT_EQ(daemon_.WaitForExit(seconds(30)), 0) << ReadFile(dir_.File("log"));
  StartDaemon();
  r = Topoctl({"admit", "-f", pod, "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), admitted);

  // Node 1 has 4 free CPUs left; a cell of 5 there is refused, naming it.
  const std::string bigger =
      dir_.Write("bigger.yaml", SplitPod("5f0c0d1e-2222-4a4a-9b9b-00000000000c", 5, 2));
  r = Topoctl({"admit", "-f", bigger, "--output", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const nlohmann::json refused = nlohmann::json::parse(r.out);
  EXPECT_EQ(refused["reason"], "NUMASplitError");
  EXPECT_THAT(refused["message"].get<std::string>(),
              HasSubstr("NUMA node 1: 4 free exclusive CPUs, cell 0 needs 5"));
  EXPECT_THAT(r.err, HasSubstr("NUMASplitError"));
}

}  // namespace
}  // namespace topologyd::testing
