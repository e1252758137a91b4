// `topoctl simulate` decides as the daemon does: the same manifests admitted one by one through
// a running topologyd (MinimalConfig: CPUs 0-15 on 2 NUMA nodes, CPU 0 reserved, static CPU
// policy, best-effort) and simulated offline on the same machine and configuration give the
// same decisions and the same CPUs, also when the simulation takes the daemon's machine; the same
// seed gives the same run; bad input is refused.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr char kSynthetic[] = "pack:2 numa:1 core:4 pu:2";

std::string Manifest(const std::string& name, const std::string& uid, const std::string& cpu,
                     bool guaranteed = true) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: sim\n" +
         "  uid: " + uid + "\nspec:\n  containers:\n  - name: app\n    resources:\n" +
         (guaranteed ? "      limits: {cpu: \"" + cpu + "\", memory: 256Mi}\n"
                     : "      requests: {cpu: \"" + cpu + "\", memory: 256Mi}\n");
}

// The pods in arrival order: exclusive CPUs of several sizes, a Burstable pod in the shared
// pool, and a last one the remaining CPUs cannot hold.
const std::vector<std::vector<std::string>> kPods = {
    {"a", "3"}, {"b", "2"}, {"c", "4"}, {"d", "500m", "burstable"}, {"e", "3"}, {"f", "6"}};

class TopoctlSimulateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.File("config.yaml");
    WriteFile(config_, MinimalConfig(dir_.path()));
    std::filesystem::create_directory(dir_.File("pods"));
    for (size_t i = 0; i < kPods.size(); ++i) {
      // sim-0000N: the uid the simulation gives the N-th arrival.
      const std::string uid = "sim-0000" + std::to_string(i);
      WriteFile(dir_.File("pods/" + std::to_string(i) + "-" + kPods[i][0] + ".yaml"),
                Manifest(kPods[i][0], uid, kPods[i][1], kPods[i].size() == 2));
    }
  }

  CommandResult Simulate(std::vector<std::string> args) {
    args.insert(args.begin(),
                {TopoctlBinary(), "simulate", "--synthetic", kSynthetic, "--config", config_});
    return RunCommand(args);
  }

  TempDir dir_;
  std::string config_;
};

TEST_F(TopoctlSimulateTest, DecidesAsTheDaemonDoes) {
  const std::string socket = dir_.File("topologyd.sock");
  DaemonProcess daemon;
  daemon.Start(config_, dir_.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30))) << ReadFile(dir_.File("log"));
  std::map<std::string, nlohmann::json> by_daemon;  // pod name -> admit document
  for (size_t i = 0; i < kPods.size(); ++i) {
    const std::string file = dir_.File("pods/" + std::to_string(i) + "-" + kPods[i][0] + ".yaml");
    CommandResult r =
        RunCommand({TopoctlBinary(), "--socket", socket, "admit", "-f", file, "--output", "json"});
    ASSERT_FALSE(r.out.empty()) << r.err;
    by_daemon[kPods[i][0]] = nlohmann::json::parse(r.out);
  }
  ASSERT_FALSE(by_daemon["f"]["admitted"].get<bool>()) << "the last pod must not fit";

  CommandResult sim = Simulate({dir_.File("pods"), "-o", "json"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json doc = nlohmann::json::parse(sim.out);
  ASSERT_EQ(doc["variants"].size(), 1u);
  const nlohmann::json& decisions = doc["variants"][0]["decisions"];
  ASSERT_EQ(decisions.size(), kPods.size());
  for (const nlohmann::json& d : decisions) {
    const std::string name = d["pod"].get<std::string>().substr(4);  // "sim/<name>"
    const nlohmann::json& daemon_decision = by_daemon.at(name);
    ASSERT_EQ(d["admitted"], daemon_decision["admitted"]) << name;
    if (!d["admitted"].get<bool>()) {
      EXPECT_EQ(d["reason"], daemon_decision["reason"]) << name;
      continue;
    }
    ASSERT_EQ(d["containers"].size(), daemon_decision["containers"].size()) << name;
    for (size_t c = 0; c < d["containers"].size(); ++c) {
      const nlohmann::json& mine = d["containers"][c];
      const nlohmann::json& theirs = daemon_decision["containers"][c];
      EXPECT_EQ(mine["name"], theirs["name"]);
      EXPECT_EQ(mine["exclusive"], theirs["exclusive"]) << name;
      EXPECT_EQ(mine["numa_affinity"], theirs["numa_affinity"]) << name;
      if (mine["exclusive"].get<bool>()) {
        EXPECT_EQ(mine["cpus"], theirs["cpus"]) << name;
      }
    }
  }
  EXPECT_EQ(doc["variants"][0]["admitted"], 5);
  EXPECT_EQ(doc["variants"][0]["rejected"], 1);

  // Without --input or --synthetic the machine is the daemon's: the same run. The global
  // --output works as the command's own -o.
  CommandResult live = RunCommand({TopoctlBinary(), "--socket", socket, "--output", "json",
                                   "simulate", "--config", config_, dir_.File("pods")});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  const nlohmann::json on_daemon = nlohmann::json::parse(live.out);
  EXPECT_THAT(on_daemon["machine"]["source"].get<std::string>(), HasSubstr(socket));
  EXPECT_EQ(on_daemon["variants"][0]["decisions"], decisions);
}

TEST_F(TopoctlSimulateTest, SameSeedSameRunAndOneColumnPerVariant) {
  const std::vector<std::string> args = {dir_.File("pods"),
                                         "--repeat",
                                         "3",
                                         "--order",
                                         "shuffle",
                                         "--seed",
                                         "7",
                                         "--compare",
                                         "policy=best-effort,single-numa-node",
                                         "-o",
                                         "json"};
  CommandResult first = Simulate(args);
  CommandResult second = Simulate(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json a = nlohmann::json::parse(first.out);
  nlohmann::json b = nlohmann::json::parse(second.out);
  ASSERT_EQ(a["variants"].size(), 2u);
  EXPECT_EQ(a["variants"][1]["name"], "policy=single-numa-node");
  for (size_t v = 0; v < 2; ++v) {
    EXPECT_EQ(a["variants"][v]["decisions"], b["variants"][v]["decisions"]);
  }

  CommandResult table = Simulate({dir_.File("pods"), "--compare", "policy=none,restricted"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("policy=none"));
  EXPECT_THAT(table.out, HasSubstr("policy=restricted"));
  EXPECT_THAT(table.out, HasSubstr("pods admitted"));
}

TEST_F(TopoctlSimulateTest, RefusesBadInputWithAClearMessage) {
  CommandResult axis = Simulate({dir_.File("pods"), "--compare", "colour=red"});
  EXPECT_EQ(axis.exit_code, 2);
  EXPECT_THAT(axis.err, HasSubstr("unknown key \"colour\""));

  CommandResult policy = Simulate({dir_.File("pods"), "--compare", "policy=strict"});
  EXPECT_EQ(policy.exit_code, 1);
  EXPECT_THAT(policy.err, HasSubstr("variant policy=strict: topologyManagerPolicy"));

  WriteFile(dir_.File("bad.yaml"),
            Manifest("ok", "u1", "1") + "---\n" + Manifest("bad", "u2", "abc"));
  CommandResult manifest = Simulate({dir_.File("bad.yaml")});
  EXPECT_EQ(manifest.exit_code, 1);
  EXPECT_THAT(manifest.err, HasSubstr("document 2"));
}

}  // namespace
}  // namespace topologyd::testing
