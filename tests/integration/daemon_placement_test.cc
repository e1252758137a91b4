// The daemon's own Placement sync against a real Placement (python3-placement; skips without
// it): the tree appears without anyone asking, a SIGHUP after a live change of a placement key
// moves exactly the inventory it changes, and with Placement gone admissions are still
// answered while the failed syncs are counted in Status.
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "nlohmann/json.hpp"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/placement_http.h"
#include "lib/placement/sync.h"
#include "lib/placement/uuid5.h"
#include "tests/integration/placement_server.h"
#include "tests/integration/process.h"
#include "tests/support/require_component.h"

namespace topologyd::testing {
namespace {

using nlohmann::json;

constexpr char kPod[] = R"(apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: shop, uid: 6a1f0c1e-0b8e-4f7a-9a51-3c2d1e0f9a87}
spec:
  containers:
  - name: app
    image: busybox
    resources:
      limits: {cpu: "2", memory: 256Mi}
)";

class DaemonPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string missing = PlacementMissing(); !missing.empty()) SKIP_OR_FAIL() << missing;
    ASSERT_EQ(server_.Start(dir_.path()), "");
    transport_.emplace(
        *placement::CurlPlacementTransport::Create({.url = server_.url(), .token = "admin"}));
    WriteFile(dir_.File("token"), "admin\n");
    socket_ = dir_.File("topologyd.sock");
    config_ = dir_.File("config.yaml");
  }

  void TearDown() override {
    server_.Stop();
    if (HasFailure()) {
      server_.KeepLog("daemon_placement_test");
      std::cerr << "topologyd log:\n" << ReadFile(dir_.File("log"));
    }
  }

  // The 2-node synthetic machine of MinimalConfig (CPUs 0-7 on node 0, 8-15 on node 1; CPU 0
  // reserved), published as `node-1` every second.
  std::string Config(const std::string& placement_extra = "") const {
    return MinimalConfig(dir_.path(), "placement:\n  endpoint: " + server_.url() +
                                          "\n  tokenFile: " + dir_.File("token") +
                                          "\n  nodeName: node-1\n  syncPeriod: 1s\n" +
                                          placement_extra);
  }

  json Status() {
    CommandResult r = RunCommand({TopoctlBinary(), "--socket", socket_, "-o", "json", "status"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }

  // Polls `status` until `pred` holds on its placement part (at most 30 s).
  json WaitForPlacement(const std::function<bool(const json&)>& pred) {
    json placement;
    for (int i = 0; i < 300; ++i) {
      placement = Status()["placement"];
      if (placement.is_object() && pred(placement)) return placement;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "status.placement never got there: " << placement.dump();
    return placement;
  }

  json Get(const std::string& path) {
    absl::StatusOr<placement::HttpResponse> r =
        transport_->Send({"GET", path, std::nullopt}, placement::kNewestMicroversion);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? json::parse(r->body, nullptr, false) : json::object();
  }

  // name -> generation of node-1's tree.
  std::map<std::string, int64_t> Generations() {
    std::map<std::string, int64_t> out;
    const json listed = Get("/resource_providers?in_tree=" + placement::ProviderUuid("node-1"));
    for (const json& rp : listed.value("resource_providers", json::array())) {
      out[rp["name"]] = rp["generation"];
    }
    return out;
  }

  json Inventories(const std::string& name) {
    return Get("/resource_providers/" + placement::ProviderUuid(name) +
               "/inventories")["inventories"];
  }

  TempDir dir_;
  PlacementServer server_;
  std::optional<placement::CurlPlacementTransport> transport_;
  std::string socket_;
  std::string config_;
};

TEST_F(DaemonPlacementTest, PublishesUpdatesOnReloadAndKeepsAdmittingWithoutPlacement) {
  WriteFile(config_, Config());
  DaemonProcess daemon;
  daemon.Start(config_, dir_.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket_, std::chrono::seconds(30)))
      << ReadFile(dir_.File("log"));

  // The tree appears by itself.
  json placement = WaitForPlacement([](const json& p) { return p["last_ok"].get<bool>(); });
  EXPECT_EQ(placement["endpoint"], server_.url());
  EXPECT_EQ(placement["root_provider_name"], "node-1");
  EXPECT_EQ(placement["root_provider_uuid"], placement::ProviderUuid("node-1"));
  EXPECT_EQ(placement["microversion"], "1.39");
  EXPECT_EQ(placement["failed_syncs"], 0);
  const std::map<std::string, int64_t> before = Generations();
  ASSERT_TRUE(before.contains("node-1_NUMA0")) << json(before).dump();
  ASSERT_TRUE(before.contains("node-1_NUMA1")) << json(before).dump();
  EXPECT_EQ(placement["providers"], before.size());
  EXPECT_EQ(Inventories("node-1_NUMA0")["PCPU"]["total"], 8);
  EXPECT_EQ(Inventories("node-1_NUMA0")["PCPU"]["reserved"], 1);
  EXPECT_EQ(Inventories("node-1_NUMA1")["PCPU"]["total"], 8);
  EXPECT_FALSE(Inventories("node-1_NUMA1").contains("VCPU"));

  // A live change of the tree: CPUs 8-9 shared. SIGHUP, and exactly NUMA1's inventory moves.
  const uint64_t syncs = placement["syncs"];
  WriteFile(config_, Config("  sharedCPUs: \"8-9\"\n  vcpuAllocationRatio: 4\n"));
  daemon.Signal(SIGHUP);
  placement = WaitForPlacement([&](const json& p) {
    return p["syncs"].get<uint64_t>() > syncs && p["last_trigger"] == "reload";
  });
  EXPECT_TRUE(placement["last_ok"].get<bool>()) << placement.dump();
  EXPECT_EQ(placement["providers_written"], 1);
  std::map<std::string, int64_t> expected = before;
  ++expected["node-1_NUMA1"];
  EXPECT_EQ(Generations(), expected);
  const json numa1 = Inventories("node-1_NUMA1");
  EXPECT_EQ(numa1["PCPU"]["total"], 6);
  EXPECT_EQ(numa1["VCPU"]["total"], 2);
  EXPECT_EQ(numa1["VCPU"]["allocation_ratio"], 4.0);
  const json reload = Status()["last_reload"];
  EXPECT_EQ(reload["applied_keys"],
            json::array({"placement.sharedCPUs", "placement.vcpuAllocationRatio"}));

  // Placement goes away: admissions are answered, the failures are counted.
  server_.Stop();
  const uint64_t failed = Status()["placement"]["failed_syncs"];
  CommandResult admitted =
      RunCommand({TopoctlBinary(), "--socket", socket_, "-o", "json", "admit", "-f",
                  (WriteFile(dir_.File("pod.yaml"), kPod), dir_.File("pod.yaml"))});
  ASSERT_EQ(admitted.exit_code, 0) << admitted.err;
  EXPECT_TRUE(json::parse(admitted.out)["admitted"].get<bool>()) << admitted.out;
  placement =
      WaitForPlacement([&](const json& p) { return p["failed_syncs"].get<uint64_t>() > failed; });
  EXPECT_FALSE(placement["last_ok"].get<bool>());
  EXPECT_THAT(placement["last_error"].get<std::string>(),
              ::testing::HasSubstr("GET " + server_.url() + "/"));
  EXPECT_GE(placement["consecutive_failures"].get<uint64_t>(), 1u);
  EXPECT_TRUE(Status()["healthy"].get<bool>());

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.WaitForExit(std::chrono::seconds(30)), 0);
  // One error line for the whole episode.
  const std::string log = ReadFile(dir_.File("log"));
  size_t failures_logged = 0;
  for (size_t at = log.find("placement: sync to"); at != std::string::npos;
       at = log.find("placement: sync to", at + 1)) {
    if (log.compare(log.find(' ', at + 19), 8, " failed ") == 0) ++failures_logged;
  }
  EXPECT_EQ(failures_logged, 1u) << log;
}

// Needs no Placement: `--check-config` accepts the file (start-up does not need the token) and
// warns that every sync would fail.
TEST(DaemonPlacementCheckConfig, WarnsOfAnUnreadableTokenFile) {
  TempDir dir;
  const std::string config = dir.File("config.yaml");
  WriteFile(config, MinimalConfig(dir.path(),
                                  "placement: {endpoint: \"http://127.0.0.1:1\", "
                                  "tokenFile: " +
                                      dir.File("token") + "}\n"));
  const CommandResult r = RunCommand({TopologydBinary(), "--check-config", config});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err,
              ::testing::HasSubstr("warning: " + config + ": placement.tokenFile: cannot read " +
                                   dir.File("token")));
  EXPECT_THAT(r.err, ::testing::HasSubstr("every Placement sync fails"));
  WriteFile(dir.File("token"), "admin\n");
  const CommandResult fixed = RunCommand({TopologydBinary(), "--check-config", config});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_THAT(fixed.err, ::testing::Not(::testing::HasSubstr("placement")));
}

}  // namespace
}  // namespace topologyd::testing
