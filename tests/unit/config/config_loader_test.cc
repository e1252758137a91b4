#include "lib/config/config_loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"
#include "tests/unit/config/parse_util.h"

namespace topologyd::config {
namespace {

using testing::ErrorOf;

using ::testing::HasSubstr;

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
cgroup: {root: /sys/fs/cgroup, driver: cgroupfs, runtime: cri-o, version: v2, apply: false,
         releaseGracePeriod: 1m}
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
  EXPECT_EQ(c->cgroup.driver, cgroup::CgroupDriver::kCgroupfs);
  EXPECT_EQ(c->cgroup.runtime, cgroup::Runtime::kCrio);
  EXPECT_FALSE(c->cgroup.apply);
  EXPECT_EQ(c->cgroup.release_grace, std::chrono::minutes(1));
  EXPECT_EQ(c->reconcile_period, std::chrono::seconds(90));
  EXPECT_EQ(c->log.level, "debug");
  EXPECT_EQ(c->log.format, "json");
}

TEST(ConfigLoaderTest, LimitsHaveSaneDefaultsAndBounds) {
  auto defaults = ParseConfig("", "l.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->limits.containers_per_pod, 256u);
  EXPECT_EQ(defaults->limits.request_bytes, 1048576u);
  auto set = ParseConfig("limits: {containersPerPod: 1000, requestBytes: 4194304}\n", "l.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->limits.containers_per_pod, 1000u);
  EXPECT_EQ(set->limits.request_bytes, 4194304u);
  EXPECT_THAT(ErrorOf("limits: {containersPerPod: 0}\n"),
              HasSubstr("limits.containersPerPod: must be at least 1"));
  EXPECT_THAT(ErrorOf("limits: {containersPerPod: -1}\n"), HasSubstr("limits.containersPerPod"));
  EXPECT_THAT(ErrorOf("limits: {requestBytes: 4096}\n"),
              HasSubstr("limits.requestBytes: must be 524288 to 2147483647"));
  EXPECT_THAT(ErrorOf("limits: {requestBytes: 3000000000}\n"),
              HasSubstr("limits.requestBytes: must be 524288 to 2147483647"));
  EXPECT_THAT(ErrorOf("limits: {maxPods: 3}\n"), HasSubstr("limits.maxPods: unknown key"));
}

TEST(ConfigLoaderTest, FeatureGatesTakeKubeletsNamesAndNoOthers) {
  auto c = ParseConfig(
      "featureGates: {CPUManagerPolicyAlphaOptions: true, CPUManagerPolicyBetaOptions: false,\n"
      "  DisableCPUQuotaWithExclusiveCPUs: false}\n",
      "f.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->feature_gates.cpu_manager_policy_alpha_options);
  EXPECT_FALSE(c->feature_gates.cpu_manager_policy_beta_options);
  EXPECT_FALSE(c->feature_gates.disable_cpu_quota_with_exclusive_cpus);
  auto defaults = ParseConfig("", "f.yaml");
  EXPECT_FALSE(defaults->feature_gates.cpu_manager_policy_alpha_options);
  EXPECT_TRUE(defaults->feature_gates.cpu_manager_policy_beta_options);
  EXPECT_TRUE(defaults->feature_gates.disable_cpu_quota_with_exclusive_cpus);
  auto unknown = ParseConfig("featureGates: {MemoryQoS: true}\n", "f.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("f.yaml:1: featureGates.MemoryQoS: unknown key"));
}

TEST(ConfigLoaderTest, NrtIsOffByDefaultAndTakesAFileOutsideStateDir) {
  auto defaults = ParseConfig("", "n.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->nrt.file, "");
  EXPECT_EQ(defaults->nrt.node_name, "");
  auto set = ParseConfig("nrt: {file: /run/topologyd/nrt.yaml, nodeName: worker-7}\n", "n.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->nrt.file, "/run/topologyd/nrt.yaml");
  EXPECT_EQ(set->nrt.node_name, "worker-7");
  // Relative, like every path of the file: from the file's directory (LoadConfigFile).
  EXPECT_TRUE(ParseConfig("nrt: {file: ../run/nrt.yaml}\n", "n.yaml").ok());
  EXPECT_THAT(ErrorOf("stateDir: state\nnrt: {file: state/nrt.yaml}\n"),
              HasSubstr("nrt.file: must not be in stateDir"));
  EXPECT_THAT(ErrorOf("nrt: {file: \"\"}\n"), HasSubstr("nrt.file: must not be empty"));
  EXPECT_THAT(ErrorOf("nrt: {path: /x}\n"), HasSubstr("nrt.path: unknown key"));
  EXPECT_THAT(ErrorOf("stateDir: /var/lib/t\nnrt: {file: /var/lib/t/state.json}\n"),
              HasSubstr("nrt.file: must not be in stateDir"));
  EXPECT_THAT(ErrorOf("nrt: {nodeName: Worker_7}\n"),
              HasSubstr("nrt.nodeName: must be a Kubernetes node name"));
}

TEST(ConfigLoaderTest, NrtApiServerTakesAKubeconfigOrInCluster) {
  auto defaults = ParseConfig("", "n.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->nrt.api_server.has_value());
  auto set = ParseConfig(
      "nrt: {apiServer: {kubeconfig: /etc/kubernetes/kubelet.conf, resyncPeriod: 30s}}\n",
      "n.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_TRUE(set->nrt.api_server.has_value());
  EXPECT_EQ(set->nrt.api_server->kubeconfig, "/etc/kubernetes/kubelet.conf");
  EXPECT_EQ(set->nrt.api_server->resync_period, std::chrono::seconds(30));
  EXPECT_EQ(set->nrt.api_server->timeout, std::chrono::seconds(5));
  auto in_cluster = ParseConfig("nrt: {apiServer: {kubeconfig: in-cluster}}\n", "n.yaml");
  ASSERT_TRUE(in_cluster.ok()) << in_cluster.status();
  EXPECT_EQ(in_cluster->nrt.api_server->kubeconfig, "in-cluster");
  EXPECT_EQ(in_cluster->nrt.api_server->resync_period, std::chrono::minutes(1));

  EXPECT_THAT(ErrorOf("nrt: {apiServer: {}}\n"),
              HasSubstr("nrt.apiServer.kubeconfig: required: a kubeconfig file, or "
                        "\"in-cluster\""));
  EXPECT_THAT(ErrorOf("nrt: {apiServer: {kubeconfig: k, resyncPeriod: 0s}}\n"),
              HasSubstr("nrt.apiServer.resyncPeriod: must be positive"));
  EXPECT_THAT(ErrorOf("nrt: {apiServer: {kubeconfig: k, timeout: soon}}\n"),
              HasSubstr("nrt.apiServer.timeout:"));
  EXPECT_THAT(ErrorOf("nrt: {apiServer: {kubeconfig: k, token: t}}\n"),
              HasSubstr("nrt.apiServer.token: unknown key"));
  EXPECT_THAT(ErrorOf("nrt: {apiServer: in-cluster}\n"),
              HasSubstr("nrt.apiServer: expected a mapping"));
}

TEST(ConfigLoaderTest, EmptySocketGroupKeepsTheDaemonsOwn) {
  auto c = ParseConfig("socket: {group: \"\"}\n", "g.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->socket.group, "");
  EXPECT_EQ(ParseConfig("", "g.yaml")->socket.group, "root");
  auto no_value = ParseConfig("socket:\n  group:\n", "g.yaml");
  ASSERT_FALSE(no_value.ok());
  EXPECT_THAT(std::string(no_value.status().message()),
              HasSubstr("g.yaml:2: socket.group: has no value"));
}

TEST(ConfigLoaderTest, ConnectionsPerUidAreCappedAtAPositiveNumber) {
  EXPECT_EQ(ParseConfig("", "c.yaml")->socket.max_connections_per_uid, 128u);
  auto c = ParseConfig("socket: {maxConnectionsPerUid: 4}\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->socket.max_connections_per_uid, 4u);
  EXPECT_THAT(ErrorOf("socket: {maxConnectionsPerUid: 0}\n"),
              HasSubstr("test.yaml:1: socket.maxConnectionsPerUid: must be at least 1"));
  EXPECT_THAT(ErrorOf("socket: {maxConnectionsPerUid: -1}\n"),
              HasSubstr("socket.maxConnectionsPerUid"));
  EXPECT_THAT(ErrorOf("socket: {maxConnectionsPerUid: many}\n"),
              HasSubstr("socket.maxConnectionsPerUid"));
}

TEST(ConfigLoaderTest, ADeviceHasNumaNodeOrNumaNodesNotBoth) {
  auto both = ParseConfig(
      "devices:\n- resourceName: example.com/fpga\n  devices:\n"
      "  - {id: f0, numaNode: 0, numaNodes: [1]}\n",
      "d.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(std::string(both.status().message()),
              HasSubstr("set either numaNode or numaNodes, not both"));
  auto list = ParseConfig(
      "devices:\n- resourceName: example.com/fpga\n  devices:\n  - {id: f0, numaNodes: [0, 1]}\n",
      "d.yaml");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->devices[0].devices[0].numa_nodes, (std::vector<int>{0, 1}));
}

TEST(ConfigLoaderTest, CgroupRuntimeIsContainerdOrCriO) {
  auto c = ParseConfig("cgroup: {driver: cgroupfs}\n", "r.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cgroup.runtime, cgroup::Runtime::kContainerd);
  auto bad = ParseConfig("cgroup: {runtime: docker}\n", "r.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("r.yaml:1: cgroup.runtime"));
}

TEST(ConfigLoaderTest, UnknownKeyIsNamedWithFileAndLine) {
  std::string error = ErrorOf("log: {level: info}\ncpuManagerPolcy: static\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:2: cpuManagerPolcy: unknown key"));
}

TEST(ConfigLoaderTest, UnknownKeySuggestsTheNearestKnownKey) {
  EXPECT_THAT(
      ErrorOf("cpuManagerPolcy: static\n"),
      HasSubstr("test.yaml:1: cpuManagerPolcy: unknown key; did you mean cpuManagerPolicy?"));
  EXPECT_THAT(ErrorOf("cgroup: {drivr: systemd}\n"),
              HasSubstr("cgroup.drivr: unknown key; did you mean driver?"));
  // Nothing near: the keys there are, which is what there is to say.
  EXPECT_THAT(ErrorOf("log: {colour: red}\n"),
              HasSubstr("log.colour: unknown key (known keys here: format, level)"));
}

TEST(ConfigLoaderTest, EveryProblemIsReportedInLineOrder) {
  // Found in reading order (the root's keys, then its unknown keys), reported in line order.
  const std::string error = ErrorOf(
      "bogusKey: 1\n"
      "cgroup:\n"
      "  driver: upstart\n"
      "topologyManagerPolicy: strict\n"
      "reconcilePeriod: 0s\n");
  const std::vector<std::string> lines = absl::StrSplit(error, '\n');
  ASSERT_EQ(lines.size(), 4u) << error;
  EXPECT_THAT(lines[0], ::testing::StartsWith("test.yaml:1: bogusKey: unknown key"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("test.yaml:3: cgroup.driver: unknown value"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("test.yaml:4: topologyManagerPolicy: unknown value"));
  EXPECT_THAT(lines[3], ::testing::StartsWith("test.yaml:5: reconcilePeriod: must be positive"));
}

TEST(ConfigLoaderTest, CheckConfigFileReportsTheFilesAndTheChecksProblemsInOneRun) {
  topologyd::testing::TempDir dir{"config_check"};
  const std::string path = dir.path() + "/c.yaml";
  std::ofstream(path) << "reservedSystemCPUs: \"40\"\n"
                         "cgroup: {drivr: systemd}\n"
                         "cpuManagerPolicy: static\n";
  std::string checked_reserved;
  const absl::Status status = CheckConfigFile(path, [&](const Config& read) {
    checked_reserved = read.reserved_system_cpus.value_or("");
    return absl::InvalidArgumentError("reservedSystemCPUs: CPUs 40 are not on this machine");
  });
  EXPECT_EQ(checked_reserved, "40") << "the check sees the file as read, past its problems";
  EXPECT_EQ(std::string(status.message()),
            path + ":1: reservedSystemCPUs: CPUs 40 are not on this machine\n" + path +
                ":2: cgroup.drivr: unknown key; did you mean driver?");
  EXPECT_TRUE(CheckConfigFile(path.substr(0, path.size() - 6) + "/none.yaml", [](const Config&) {
                return absl::OkStatus();
              }).code() == absl::StatusCode::kNotFound);
}

TEST(ConfigLoaderTest, LaterErrorsAreLocatedAtTheirKeys) {
  absl::StatusOr<Config> config = ParseConfig(
      "cpuManagerPolicy: static\n"
      "reservedMemory:\n"
      "- numaNode: 0\n"
      "  limits: {memory: 1Gx}\n"
      "reservedSystemCPUs: \"40\"\n",
      "node.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const absl::Status located = LocateKeyErrors(
      *config,
      absl::InvalidArgumentError("reservedSystemCPUs: CPUs 40 are not on this machine\n"
                                 "reservedMemory[0].limits.memory: invalid quantity \"1Gx\"\n"
                                 "cpuManagerPolicyOptions: not set here"),
      "node.yaml");
  EXPECT_EQ(located.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(located.message()),
            "node.yaml: cpuManagerPolicyOptions: not set here\n"
            "node.yaml:4: reservedMemory[0].limits.memory: invalid quantity \"1Gx\"\n"
            "node.yaml:5: reservedSystemCPUs: CPUs 40 are not on this machine");
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

// kubelet's Node Allocatable keys: unset, set empty and set are three different things.
TEST(ConfigLoaderTest, NodeAllocatableKeysAreKeptOnlyWhenSet) {
  auto unset = ParseConfig("memoryManagerPolicy: Static\n", "test.yaml");
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_FALSE(unset->kube_reserved.has_value());
  EXPECT_FALSE(unset->system_reserved.has_value());
  EXPECT_FALSE(unset->eviction_hard.has_value());

  auto set = ParseConfig(
      "kubeReserved: {cpu: 500m, memory: 512Mi}\nsystemReserved: {}\n"
      "evictionHard: {memory.available: 100Mi, nodefs.available: \"10%\"}\n",
      "test.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->kube_reserved,
            (std::map<std::string, std::string>{{"cpu", "500m"}, {"memory", "512Mi"}}));
  EXPECT_EQ(set->system_reserved, (std::map<std::string, std::string>{}));
  EXPECT_EQ(set->eviction_hard, (std::map<std::string, std::string>{{"memory.available", "100Mi"},
                                                                    {"nodefs.available", "10%"}}));

  EXPECT_THAT(ErrorOf("kubeReserved: 1Gi\n"),
              HasSubstr("kubeReserved: expected a mapping of names to values"));
  EXPECT_THAT(ErrorOf("evictionHard: {memory.available: [1]}\n"),
              HasSubstr("evictionHard.memory.available: expected a string"));
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

TEST(ConfigLoaderTest, DuplicateKeysAreErrors) {
  EXPECT_THAT(ErrorOf("cpuManagerPolicy: static\nlog: {level: info}\ncpuManagerPolicy: none\n"),
              HasSubstr("test.yaml:3: cpuManagerPolicy: duplicate key (first set on line 1)"));
  EXPECT_THAT(ErrorOf("cgroup:\n  driver: systemd\n  root: /x\n  driver: cgroupfs\n"),
              HasSubstr("test.yaml:4: cgroup.driver: duplicate key (first set on line 2)"));
  // Every mapping the loader walks, flow style included.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"socket: {group: a, group: b}\n", "socket.group: duplicate key"},
      {"allowedPeers: {uids: [0], uids: [1]}\n", "allowedPeers.uids: duplicate key"},
      {"log: {level: info, level: debug}\n", "log.level: duplicate key"},
      {"topology: {source: live, source: live}\n", "topology.source: duplicate key"},
      {"devices: [{resourceName: a/b, resourceName: a/c, pci: {vendor: \"10de\"}}]\n",
       "devices[0].resourceName: duplicate key"},
      {"devices: [{resourceName: a/b, pci: {vendor: \"10de\", vendor: \"8086\"}}]\n",
       "devices[0].pci.vendor: duplicate key"},
      {"devices: [{resourceName: a/b, devices: [{id: x, id: y}]}]\n",
       "devices[0].devices[0].id: duplicate key"},
      {"reservedMemory: [{numaNode: 0, numaNode: 1}]\n",
       "reservedMemory[0].numaNode: duplicate key"},
      {"reservedMemory: [{numaNode: 0, limits: {memory: 1Gi, memory: 2Gi}}]\n",
       "reservedMemory[0].limits.memory: duplicate key"},
      {"cpuManagerPolicyOptions: {full-pcpus-only: \"true\", full-pcpus-only: \"false\"}\n",
       "cpuManagerPolicyOptions.full-pcpus-only: duplicate key"},
      {"topologyManagerPolicyOptions: {prefer-closest-numa-nodes: \"true\",\n"
       "  prefer-closest-numa-nodes: \"false\"}\n",
       "test.yaml:2: topologyManagerPolicyOptions.prefer-closest-numa-nodes: duplicate key"},
  };
  for (const auto& [yaml, expected] : cases) EXPECT_THAT(ErrorOf(yaml), HasSubstr(expected));
  // A repeated unknown key is unknown once and a duplicate once, not unknown twice.
  std::string error = ErrorOf("a: 1\na: 2\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:1: a: unknown key"));
  EXPECT_THAT(error, HasSubstr("test.yaml:2: a: duplicate key (first set on line 1)"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("test.yaml:2: a: unknown key")));
}

TEST(ConfigLoaderTest, MoreThanOneDocumentIsAnError) {
  EXPECT_THAT(ErrorOf("cpuManagerPolicy: static\n---\ncpuManagerPolicy: none\n"),
              HasSubstr("test.yaml:3: the file holds 2 YAML documents; topologyd reads one"));
  // An empty first document must not mean "all defaults" while the second is dropped.
  EXPECT_THAT(ErrorOf("---\n---\nlog: {level: debug}\n---\n"),
              HasSubstr("the file holds 3 YAML documents"));
  // A single document may still start with --- or end with ...
  auto config = ParseConfig("---\nlog: {level: debug}\n...\n", "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->log.level, "debug");
  // Comments only: all defaults, as for an empty file.
  EXPECT_TRUE(ParseConfig("# nothing set\n", "test.yaml").ok());
}

// yaml-cpp 0.7 reports endless empty documents for such text without reading on; the loader
// must stop and refuse it rather than grow until memory runs out.
TEST(ConfigLoaderTest, TextTheYamlParserCannotReadOnIsAnError) {
  EXPECT_THAT(ErrorOf(","), HasSubstr("test.yaml:1: not a YAML document"));
  EXPECT_THAT(ErrorOf(",a"), HasSubstr("test.yaml:1: not a YAML document"));
  // After a valid first document too, with the line where reading stopped.
  EXPECT_THAT(ErrorOf("[a]\n,\n"), HasSubstr("test.yaml:2: not a YAML document"));
  EXPECT_THAT(ErrorOf("log: {level: debug}\n...\n,a\n"),
              HasSubstr("test.yaml:3: not a YAML document"));
}

TEST(ConfigLoaderTest, DurationTooLongForANumberIsAnError) {
  const std::string error = ErrorOf("reconcilePeriod: 2" + std::string(308, '0') + "s\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:1: reconcilePeriod: invalid duration \"2000"));
  EXPECT_THAT(error, HasSubstr("out of range"));
  EXPECT_LT(error.size(), 300U);
}

// Values are echoed escaped and cut, so a stray control byte or a pasted blob cannot forge log
// lines or flood `systemctl status`.
TEST(ConfigLoaderTest, EchoedValuesAreQuotedAndCut) {
  const std::string long_value(500, 'x');
  const std::string error = ErrorOf("cpuManagerPolicy: " + long_value + "\n");
  EXPECT_THAT(error, HasSubstr("unknown value \"" + std::string(64, 'x') + "\"...(500 bytes)"));
  EXPECT_EQ(error.find(long_value), std::string::npos);
  EXPECT_THAT(ErrorOf("podPolicyOverride: \"yes\\x1b[2J\"\n"),
              HasSubstr("expected true or false, got \"yes\\x1b[2J\""));
  EXPECT_THAT(ErrorOf("cpuReservedCount: \"" + std::string(300, '9') + "\"\n"),
              HasSubstr("...(300 bytes) is out of range"));
}

TEST(ConfigLoaderTest, OutOfRangeIntegerIsOneError) {
  std::string error = ErrorOf("cpuReservedCount: 99999999999999999999\n");
  EXPECT_EQ(error,
            "test.yaml:1: cpuReservedCount: \"99999999999999999999\" is out of range "
            "(-2147483648 to 2147483647)");
  EXPECT_EQ(ErrorOf("cpuReservedCount: -1\n"), "test.yaml:1: cpuReservedCount: must be >= 0");
  EXPECT_EQ(ErrorOf("cpuReservedCount: two\n"),
            "test.yaml:1: cpuReservedCount: expected an integer, got \"two\"");
  EXPECT_THAT(ErrorOf("allowedPeers: {uids: [4294967296]}\n"),
              HasSubstr("allowedPeers.uids[0]: \"4294967296\" is out of range (0 to 4294967295)"));
  auto config = ParseConfig("cpuReservedCount: 2\n", "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->cpu_reserved_count, 2);
}

TEST(ConfigLoaderTest, ReportsEveryProblemNotOnlyTheFirst) {
  std::string error = ErrorOf("a: 1\nb: 2\ncpuManagerPolicy: x\n");
  EXPECT_THAT(error, HasSubstr("test.yaml:1: a: unknown key"));
  EXPECT_THAT(error, HasSubstr("test.yaml:2: b: unknown key"));
  EXPECT_THAT(error, HasSubstr("test.yaml:3: cpuManagerPolicy: unknown value"));
}

TEST(ConfigLoaderTest, EmptyOrNullPathsAreErrorsNotDefaults) {
  // A key without a value reads as null in YAML; it must not quietly mean the default.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"listen:\n", "test.yaml:1: listen: must not be empty"},
      {"listen: ~\n", "test.yaml:1: listen: must not be empty"},
      {"listen: \"\"\n", "test.yaml:1: listen: must not be empty"},
      {"log: {level: info}\nstateDir:\nreconcilePeriod: 1s\n",
       "test.yaml:2: stateDir: must not be empty"},
      {"stateDir: null\n", "test.yaml:1: stateDir: must not be empty"},
      {"stateDir: \"\"\n", "test.yaml:1: stateDir: must not be empty"},
      {"cgroup:\n  root:\n  driver: cgroupfs\n", "test.yaml:2: cgroup.root: must not be empty"},
      {"cgroup: {root: \"\"}\n", "test.yaml:1: cgroup.root: must not be empty"},
      {"topology:\n  source: xml\n  path:\n", "test.yaml:3: topology.path: must not be empty"},
      {"topology: {source: xml, path: \"\"}\n", "test.yaml:1: topology.path: must not be empty"},
      // With another source `path` is ignored, but an empty one is still a mistake.
      {"topology: {source: live, path: }\n", "test.yaml:1: topology.path: must not be empty"},
  };
  for (const auto& [yaml, expected] : cases) EXPECT_EQ(ErrorOf(yaml), expected) << yaml;
  // Absent keys keep their defaults; absent `path` with xml is "required", once.
  EXPECT_EQ(ErrorOf("topology: {source: xml}\n"),
            "test.yaml:1: topology.path: required when source is xml");
  auto config = ParseConfig("topology: {source: live, path: /x.xml}\n", "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->state_dir, "/var/lib/topologyd");
  EXPECT_EQ(config->cgroup.root, "/sys/fs/cgroup");
}

TEST(ConfigLoaderTest, SocketPathMustFitSunPath) {
  // sun_path holds 108 bytes including the terminating NUL.
  const std::string fits = "/" + std::string(106, 's');
  auto config = ParseConfig("listen: unix://" + fits + "\n", "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->SocketPath(), fits);
  const std::string too_long = fits + "s";
  EXPECT_EQ(ErrorOf("log: {level: info}\nlisten: unix://" + too_long + "\n"),
            "test.yaml:2: listen: socket path \"" + too_long +
                "\" is 108 bytes; a Unix socket path must be shorter than 108 bytes");
}

TEST(ConfigLoaderTest, DevicePoolIsEitherPciOrDevices) {
  EXPECT_EQ(ErrorOf("devices:\n"
                    "  - resourceName: example.com/nic\n"
                    "    pci: {vendor: \"8086\"}\n"
                    "    devices: [{id: nic0}]\n"),
            "test.yaml:4: devices[0].devices: set either pci or devices, not both");
}

TEST(ConfigLoaderTest, DeviceNumaNodeIsAnIdOrMinusOne) {
  EXPECT_EQ(ErrorOf("devices:\n"
                    "  - resourceName: example.com/fpga\n"
                    "    devices:\n"
                    "      - {id: fpga0, numaNode: 0}\n"
                    "      - {id: fpga1, numaNode: -3}\n"),
            "test.yaml:5: devices[0].devices[1].numaNode: must be a NUMA node id (>= 0), or -1 "
            "for no NUMA locality; got -3");
  // -1 (sysfs' spelling) and leaving the key out both mean no locality.
  auto config = ParseConfig(
      "devices:\n"
      "  - resourceName: example.com/fpga\n"
      "    devices: [{id: a, numaNode: -1}, {id: b}, {id: c, numaNode: 2}]\n",
      "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const std::vector<ExplicitDeviceConfig>& devices = config->devices[0].devices;
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_TRUE(devices[0].numa_nodes.empty());
  EXPECT_TRUE(devices[1].numa_nodes.empty());
  EXPECT_EQ(devices[2].numa_nodes, std::vector<int>{2});
}

TEST(ConfigLoaderTest, MissingFileIsNotFound) {
  auto config = LoadConfigFile("/nonexistent/topologyd.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("/nonexistent/topologyd.yaml"));
}

// A scratch directory removed at the end of the test.
class ConfigFileTest : public ::testing::Test {
 protected:
  topologyd::testing::TempDir tmp_{"config_test"};
  const std::filesystem::path dir_ = tmp_.path();
};

TEST_F(ConfigFileTest, DirectoryIsRefused) {
  const std::string path = (dir_ / "topologyd.yaml").string();
  std::filesystem::create_directory(path);
  auto config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(), "config file " + path + " is a directory");
}

TEST_F(ConfigFileTest, SymlinkToADirectoryIsRefused) {
  const std::string path = (dir_ / "link.yaml").string();
  std::filesystem::create_directory_symlink(dir_, path);
  auto config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr(path + " is a directory"));
}

TEST_F(ConfigFileTest, DeviceIsRefused) {
  auto config = LoadConfigFile("/dev/null");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "config file /dev/null is not a regular file (it is a character device)");
}

TEST_F(ConfigFileTest, FifoIsRefusedWithoutBlocking) {
  const std::string path = (dir_ / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto loading = std::async(std::launch::async, [&] { return LoadConfigFile(path); });
  if (loading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Opening and closing a writer lets a blocked reader see EOF: fail rather than hang.
    std::ofstream(path).close();
    ADD_FAILURE() << "LoadConfigFile blocked on a FIFO";
  }
  auto config = loading.get();
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "config file " + path + " is not a regular file (it is a FIFO)");
}

TEST_F(ConfigFileTest, RegularFileAndSymlinkToOneLoad) {
  const std::filesystem::path file = dir_ / "real.yaml";
  std::ofstream(file) << "log: {level: debug}\n";
  std::filesystem::create_symlink(file, dir_ / "link.yaml");
  for (const std::filesystem::path& path : {file, dir_ / "link.yaml"}) {
    auto config = LoadConfigFile(path.string());
    ASSERT_TRUE(config.ok()) << path << ": " << config.status();
    EXPECT_EQ(config->log.level, "debug");
  }
  std::ofstream(dir_ / "empty.yaml").flush();
  EXPECT_TRUE(LoadConfigFile((dir_ / "empty.yaml").string()).ok());
}

TEST_F(ConfigFileTest, SocketPathLengthIsCheckedAfterResolvingRelativePaths) {
  // Short as written, too long once taken relative to the file's directory.
  const std::filesystem::path deep = dir_ / std::string(100, 'd');
  std::filesystem::create_directory(deep);
  const std::string path = (deep / "c.yaml").string();
  std::ofstream(path) << "listen: unix://topologyd.sock\n";
  auto config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  const std::string socket = (deep / "topologyd.sock").string();
  EXPECT_EQ(config.status().message(),
            fmt::format("{}:1: listen: socket path \"{}\" is {} bytes; a Unix socket path must "
                        "be shorter than 108 bytes",
                        path, socket, socket.size()));
  // Resolved, `..` included, before measuring.
  std::ofstream(path) << "listen: unix://../" << std::string(40, 'd') << "/../s.sock\n";
  config = LoadConfigFile(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->SocketPath(), (dir_ / "s.sock").string());
}

TEST_F(ConfigFileTest, NrtFileIsTakenFromTheFilesDirectory) {
  const std::string path = (dir_ / "c.yaml").string();
  std::ofstream(path) << "nrt: {file: out/nrt.yaml}\n";
  auto config = LoadConfigFile(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->nrt.file, (dir_ / "out" / "nrt.yaml").string());
}

TEST_F(ConfigFileTest, NrtKubeconfigIsTakenFromTheFilesDirectory) {
  const std::string path = (dir_ / "c.yaml").string();
  std::ofstream(path) << "nrt: {apiServer: {kubeconfig: kube/node.conf}}\n";
  auto config = LoadConfigFile(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->nrt.api_server->kubeconfig, (dir_ / "kube" / "node.conf").string());
}

TEST(ConfigLoaderTest, ShippedConfigsLoad) {
  for (const char* name : {"config/topologyd.yaml", "config/dev.yaml"}) {
    auto config = LoadConfigFile(std::string(TOPOLOGYD_SOURCE_DIR) + "/" + name);
    EXPECT_TRUE(config.ok()) << name << ": " << config.status();
  }
}

}  // namespace
}  // namespace topologyd::config
