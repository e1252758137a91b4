#include "lib/config/config_loader.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::config {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(std::string_view yaml) {
  auto config = ParseConfig(yaml, "test.yaml");
  EXPECT_FALSE(config.ok()) << "accepted:\n" << yaml;
  return config.ok() ? "" : std::string(config.status().message());
}

TEST(ConfigLoaderTest, EmptyFileGivesKubeletLikeDefaults) {
  auto config = ParseConfig("", "empty.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->cpu_manager_policy, "none");
  EXPECT_EQ(config->topology_manager_policy, "none");
  EXPECT_EQ(config->topology_manager_scope, "container");
  EXPECT_EQ(config->memory_manager_policy, "None");
  EXPECT_EQ(config->SocketPath(), "/run/topologyd/topologyd.sock");
  EXPECT_EQ(config->allowed_peers.uids, std::vector<uint32_t>{0});
  EXPECT_EQ(config->reconcile_period, std::chrono::seconds(10));
}

TEST(ConfigLoaderTest, ParsesEveryKeyOfTheArchitectureExample) {
  const char* yaml = R"(
listen: unix:///run/topologyd/topologyd.sock
socket: {mode: "0640", group: kube}
allowedPeers: {uids: [0, 1000], gids: [5]}
stateDir: /var/lib/topologyd
topology: {source: xml, path: /etc/topologyd/machine.xml}
cpuManagerPolicy: static
cpuManagerPolicyOptions: {full-pcpus-only: "true"}
reservedSystemCPUs: "0-1"
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}
memoryManagerPolicy: Static
reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]
podPolicyOverride: true
devices:
  - resourceName: nvidia.com/gpu
    pci: {vendor: "10de", class: "0302"}
  - resourceName: example.com/fpga
    devices: [{id: fpga0, numaNode: 1}]
cgroup: {root: /sys/fs/cgroup, driver: cgroupfs, version: v2, apply: false, releaseGracePeriod: 1m}
reconcilePeriod: 1m30s
log: {level: debug, format: json}
)";
  auto c = ParseConfig(yaml, "full.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->socket.mode, 0640u);
  EXPECT_EQ(c->socket.group, "kube");
  EXPECT_EQ(c->allowed_peers.uids, (std::vector<uint32_t>{0, 1000}));
  EXPECT_EQ(c->allowed_peers.gids, (std::vector<uint32_t>{5}));
  EXPECT_EQ(c->topology.source, TopologySourceConfig::Kind::kXml);
  EXPECT_EQ(c->topology.path, "/etc/topologyd/machine.xml");
  EXPECT_EQ(c->cpu_manager_policy, "static");
  EXPECT_EQ(c->cpu_manager_policy_options.at("full-pcpus-only"), "true");
  EXPECT_EQ(c->reserved_system_cpus, "0-1");
  EXPECT_EQ(c->topology_manager_policy, "single-numa-node");
  EXPECT_EQ(c->topology_manager_scope, "pod");
  EXPECT_EQ(c->memory_manager_policy, "Static");
  ASSERT_EQ(c->reserved_memory.size(), 1u);
  EXPECT_EQ(c->reserved_memory[0].limits.at("memory"), "1Gi");
  EXPECT_TRUE(c->pod_policy_override);
  ASSERT_EQ(c->devices.size(), 2u);
  ASSERT_TRUE(c->devices[0].pci.has_value());
  EXPECT_EQ(c->devices[0].pci->vendor, 0x10de);
  EXPECT_EQ(c->devices[0].pci->class_id, 0x0302);
  EXPECT_FALSE(c->devices[0].pci->device.has_value());
  EXPECT_EQ(c->devices[1].devices[0].numa_nodes, std::vector<int>{1});
  EXPECT_EQ(c->cgroup.driver, "cgroupfs");
  EXPECT_FALSE(c->cgroup.apply);
  EXPECT_EQ(c->cgroup.release_grace, std::chrono::minutes(1));
  EXPECT_EQ(c->reconcile_period, std::chrono::seconds(90));
  EXPECT_EQ(c->log.level, "debug");
  EXPECT_EQ(c->log.format, "json");
}

TEST(ConfigLoaderTest, UnknownKeyIsNamedWithFileAndLine) {
  std::string error = ErrorOf("log: {level: info}\ncpuManagerPolcy: static\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:2: cpuManagerPolcy: unknown key"));
}

TEST(ConfigLoaderTest, UnknownNestedKeyIsNamedWithItsPath) {
  std::string error = ErrorOf("cgroup:\n  root: /x\n  drivr: systemd\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:3: cgroup.drivr: unknown key"));
}

TEST(ConfigLoaderTest, WrongTypesAreErrors) {
  EXPECT_THAT(ErrorOf("log: info\n"), HasSubstr("test.yaml:1: log: expected a mapping"));
  EXPECT_THAT(ErrorOf("podPolicyOverride: maybe\n"),
              HasSubstr("podPolicyOverride: expected true or false"));
  EXPECT_THAT(ErrorOf("cpuReservedCount: two\n"),
              HasSubstr("cpuReservedCount: expected an integer"));
  EXPECT_THAT(ErrorOf("allowedPeers: {uids: 0}\n"),
              HasSubstr("allowedPeers.uids: expected a list"));
  EXPECT_THAT(ErrorOf("devices: {a: b}\n"), HasSubstr("devices: expected a list"));
  EXPECT_THAT(ErrorOf("cpuManagerPolicyOptions: [a]\n"), HasSubstr("expected a mapping"));
}

TEST(ConfigLoaderTest, BadValuesAreErrors) {
  EXPECT_THAT(ErrorOf("cpuManagerPolicy: dynamic\n"),
              HasSubstr("cpuManagerPolicy: unknown value \"dynamic\" (allowed: none, static)"));
  EXPECT_THAT(ErrorOf("reconcilePeriod: 10 seconds\n"),
              HasSubstr("reconcilePeriod: invalid duration"));
  EXPECT_THAT(ErrorOf("reconcilePeriod: 0\n"), HasSubstr("reconcilePeriod: must be positive"));
  EXPECT_THAT(ErrorOf("listen: /run/x.sock\n"), HasSubstr("listen: must be unix://PATH"));
  EXPECT_THAT(ErrorOf("socket: {mode: \"0999\"}\n"), HasSubstr("socket.mode: expected an octal"));
  EXPECT_THAT(ErrorOf("topology: {source: xml}\n"), HasSubstr("topology.path: required"));
  EXPECT_THAT(ErrorOf("devices: [{resourceName: a/b, pci: {vendor: \"xyz\"}}]\n"),
              HasSubstr("devices[0].pci.vendor: expected a PCI id"));
  EXPECT_THAT(ErrorOf("devices: [{resourceName: a/b}]\n"), HasSubstr("needs `pci` or `devices`"));
  EXPECT_THAT(ErrorOf("reservedSystemCPUs: \"0\"\ncpuReservedCount: 1\n"), HasSubstr("not both"));
  EXPECT_THAT(ErrorOf("- a\n- b\n"), HasSubstr("must be a YAML mapping"));
  EXPECT_THAT(ErrorOf("log: {level: [\n"), HasSubstr("invalid YAML"));
}

TEST(ConfigLoaderTest, ReportsEveryProblemNotOnlyTheFirst) {
  std::string error = ErrorOf("a: 1\nb: 2\ncpuManagerPolicy: x\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:1: a: unknown key"));
  EXPECT_THAT(error, HasSubstr("test.yaml:2: b: unknown key"));
  EXPECT_THAT(error, HasSubstr("test.yaml:3: cpuManagerPolicy: unknown value"));
}

TEST(ConfigLoaderTest, MissingFileIsNotFound) {
  auto config = LoadConfigFile("/nonexistent/topologyd.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("/nonexistent/topologyd.yaml"));
}

TEST(ConfigLoaderTest, ShippedConfigsLoad) {
  for (const char* name : {"config/topologyd.yaml", "config/dev.yaml"}) {
    auto config = LoadConfigFile(std::string(TOPOLOGYD_SOURCE_DIR) + "/" + name);
    EXPECT_TRUE(config.ok()) << name << ": " << config.status();
  }
}

}  // namespace
}  // namespace topologyd::config
