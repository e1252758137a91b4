#include "lib/config/config_diff.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ConfigDiffTest, IdenticalConfigsChangeNothing) {
  Config c;
  ReloadPlan plan = PlanReload(c, c);
  EXPECT_THAT(plan.applied, IsEmpty());
  EXPECT_THAT(plan.refused, IsEmpty());
  EXPECT_EQ(plan.effective, c);
}

TEST(ConfigDiffTest, LiveKeysApplyAndRestartOnlyKeysAreRefused) {
  Config old_config;
  Config next = old_config;
  next.log.level = "debug";
  next.reconcile_period = std::chrono::seconds(3);
  next.cpu_manager_policy = "static";
  next.reserved_system_cpus = "0";
  next.cgroup.runtime = cgroup::Runtime::kCrio;
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("log.level", "reconcilePeriod"));
  EXPECT_THAT(plan.refused,
              ElementsAre("cpuManagerPolicy", "reservedSystemCPUs", "cgroup.runtime"));
  EXPECT_EQ(plan.effective.log.level, "debug");
  EXPECT_EQ(plan.effective.reconcile_period, std::chrono::seconds(3));
  EXPECT_EQ(plan.effective.cpu_manager_policy, "none");  // refused: old value kept
  EXPECT_FALSE(plan.effective.reserved_system_cpus.has_value());
}

TEST(ConfigDiffTest, TheConnectionCapReloadsButTheRestOfSocketDoesNot) {
  Config old_config;
  Config next = old_config;
  next.socket.max_connections_per_uid = 8;
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("socket.maxConnectionsPerUid"));
  EXPECT_THAT(plan.refused, IsEmpty());
  EXPECT_EQ(plan.effective.socket.max_connections_per_uid, 8u);

  next.socket.mode = 0600;
  plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("socket.maxConnectionsPerUid"));
  EXPECT_THAT(plan.refused, ElementsAre("socket"));
  EXPECT_EQ(plan.effective.socket.mode, old_config.socket.mode);
}

// The container bound is read per request; gRPC's receive limit is fixed when the server starts.
TEST(ConfigDiffTest, ContainersPerPodIsLiveAndRequestBytesRestartOnly) {
  Config old_config;
  Config next = old_config;
  next.limits.containers_per_pod = 512;
  next.limits.request_bytes = 4 * 1024 * 1024;
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("limits.containersPerPod"));
  EXPECT_THAT(plan.refused, ElementsAre("limits.requestBytes"));
  EXPECT_EQ(plan.effective.limits.containers_per_pod, 512u);
  EXPECT_EQ(plan.effective.limits.request_bytes, old_config.limits.request_bytes);
}

TEST(ConfigDiffTest, NodeAllocatableKeysAreRestartOnly) {
  Config old_config;
  Config next = old_config;
  next.kube_reserved = std::map<std::string, std::string>{{"memory", "1Gi"}};
  next.system_reserved = std::map<std::string, std::string>{};
  next.eviction_hard = std::map<std::string, std::string>{{"memory.available", "1Mi"}};
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ::testing::IsEmpty());
  EXPECT_THAT(plan.refused, ElementsAre("kubeReserved", "systemReserved", "evictionHard"));
  EXPECT_FALSE(plan.effective.kube_reserved.has_value());
}

TEST(ConfigDiffTest, DevicePoolsMayBeAddedButNotChanged) {
  Config old_config;
  old_config.devices.push_back({.resource_name = "a/gpu", .pci = DevicePciMatch{.vendor = 0x10de}});
  Config added = old_config;
  added.devices.push_back({.resource_name = "b/nic", .pci = DevicePciMatch{.class_id = 0x0200}});
  ReloadPlan plan = PlanReload(old_config, added);
  EXPECT_THAT(plan.applied, ElementsAre("devices"));
  EXPECT_EQ(plan.effective.devices.size(), 2u);

  Config changed = old_config;
  changed.devices[0].pci->vendor = 0x1002;
  plan = PlanReload(old_config, changed);
  EXPECT_THAT(plan.refused, ElementsAre("devices"));
  EXPECT_EQ(plan.effective.devices, old_config.devices);
}

TEST(ConfigDiffTest, NrtNodeNameIsLiveAndNrtFileRestartOnly) {
  Config old_config;
  old_config.nrt.file = "/run/topologyd/nrt.yaml";
  Config next = old_config;
  next.nrt.file = "/run/other/nrt.yaml";
  next.nrt.node_name = "worker-9";
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("nrt.nodeName"));
  EXPECT_THAT(plan.refused, ElementsAre("nrt.file"));
  EXPECT_EQ(plan.effective.nrt.node_name, "worker-9");
  EXPECT_EQ(plan.effective.nrt.file, "/run/topologyd/nrt.yaml");
}

TEST(ConfigDiffTest, NrtApiServerIsRestartOnly) {
  Config old_config;
  Config next = old_config;
  next.nrt.api_server = NrtApiServerConfig{.kubeconfig = "/etc/kubernetes/kubelet.conf"};
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.refused, ElementsAre("nrt.apiServer"));
  EXPECT_FALSE(plan.effective.nrt.api_server.has_value());
}

}  // namespace
}  // namespace topologyd::config
