// Durability through the real daemon: SIGKILL in the middle of a burst of concurrent
// admissions, restart, and check that every acknowledged admission survived and that no
// CPU is held by two containers. Also: a corrupt checkpoint stops start-up with a message.
#include <signal.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

std::string PodJson(const std::string& uid) {
  return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"uid": ")" + uid + R"(", "name": ")" +
         uid + R"(", "namespace": "default"}, "spec": {"containers": [
         {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "64Mi"},
                                       "limits": {"cpu": "1", "memory": "64Mi"}}}]}})";
}

TEST(DaemonCrashTest, AcknowledgedAdmissionsSurviveSigkillAndNoCpuIsHeldTwice) {
  TempDir dir;
  const std::string config = dir.File("config.yaml");
  const std::string socket = dir.File("topologyd.sock");
  // 64 CPUs, CPU 0 reserved: room for 63 single-CPU pods.
  std::string text = MinimalConfig(dir.path());
  text.replace(text.find("pack:2 numa:1 core:4 pu:2"), 25, "pack:2 numa:2 core:8 pu:2");
  WriteFile(config, text);
  DaemonProcess daemon;
  daemon.Start(config, dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log"));

  constexpr int kClients = 6;
  constexpr int kPodsPerClient = 10;
  std::mutex mu;
  std::set<std::string> acknowledged;
  std::atomic<int> acks{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kPodsPerClient; ++i) {
        std::string uid = "pod-" + std::to_string(c) + "-" + std::to_string(i);
        std::string file = dir.File(uid + ".json");
        WriteFile(file, PodJson(uid));
        CommandResult r = RunCommand({TopoctlBinary(), "--socket", socket, "admit", "-f", file});
        if (r.exit_code == 0) {
          std::lock_guard<std::mutex> lock(mu);
          acknowledged.insert(uid);
          ++acks;
        }
      }
    });
  }
  // Kill the daemon mid-burst, once some admissions have been acknowledged.
  while (acks.load() < 12) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  daemon.Signal(SIGKILL);
  for (auto& t : clients) t.join();
  ASSERT_TRUE(daemon.WaitForExit(seconds(30)).has_value());
  ASSERT_GE(acknowledged.size(), 12u);
  ASSERT_LT(acknowledged.size(), size_t{kClients * kPodsPerClient}) << "the kill came too late";

  DaemonProcess restarted;
  restarted.Start(config, dir.File("log2"));
  ASSERT_TRUE(restarted.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log2"));
  CommandResult r = RunCommand({TopoctlBinary(), "--socket", socket, "allocations", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::set<std::string> present;
  std::set<std::string> cpus_seen;
  for (const auto& pod : doc["pods"]) {
    present.insert(pod["uid"]);
    for (const auto& c : pod["containers"]) {
      if (!c["exclusive"].get<bool>()) continue;
      EXPECT_TRUE(cpus_seen.insert(c["cpus"].get<std::string>()).second)
          << "CPU " << c["cpus"] << " held twice";
    }
  }
  for (const std::string& uid : acknowledged) {
    EXPECT_TRUE(present.count(uid)) << uid << " was acknowledged but is gone after the crash";
  }
  // The shared pool and the exclusive CPUs partition the machine (minus nothing else).
  std::string pool = doc["shared_pool"];
  for (const std::string& cpu : cpus_seen) {
    EXPECT_EQ(("," + pool + ",").find("," + cpu + ","), std::string::npos)
        << "exclusive CPU " << cpu << " is also in the shared pool " << pool;
  }
}

TEST(DaemonCrashTest, CorruptCheckpointStopsStartUpWithAMessage) {
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path()));
  {
    DaemonProcess daemon;
    daemon.Start(dir.File("config.yaml"), dir.File("log"));
    ASSERT_TRUE(daemon.WaitUntilServing(dir.File("topologyd.sock"), seconds(30)));
    WriteFile(dir.File("pod.json"), PodJson("victim"));
    ASSERT_EQ(RunCommand({TopoctlBinary(), "--socket", dir.File("topologyd.sock"), "admit", "-f",
                          dir.File("pod.json")})
                  .exit_code,
              0);
    daemon.Signal(SIGTERM);
    ASSERT_EQ(daemon.WaitForExit(seconds(30)), std::optional<int>(0));
  }
  std::string state = ReadFile(dir.File("state/state.json"));
  state[state.find("victim")] = 'V';
  WriteFile(dir.File("state/state.json"), state);
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log2"));
  std::optional<int> code = daemon.WaitForExit(seconds(30));
  ASSERT_TRUE(code.has_value()) << "started on a corrupt checkpoint";
  EXPECT_EQ(*code, 1);
  std::string log = ReadFile(dir.File("log2"));
  EXPECT_THAT(log, HasSubstr("state.json"));
  EXPECT_THAT(log, HasSubstr("checksum"));
}

}  // namespace
}  // namespace topologyd::testing
