// BuildNodePolicy(): the semantic config checks, each error naming its config key, and the
// empty state it derives.
#include "lib/admission/node_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct BadCase {
  std::string name;
  std::function<void(config::Config&)> change;
  std::string prefix;
  std::string detail;
};

TEST(NodePolicyTest, ErrorsNameTheConfigKey) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 1});
  const std::vector<BadCase> cases = {
      {"tm policy", [](config::Config& c) { c.topology_manager_policy = "strict"; },
       "topologyManagerPolicy: ", "unknown policy: \"strict\""},
      {"tm scope", [](config::Config& c) { c.topology_manager_scope = "node"; },
       "topologyManagerScope: ", "unknown scope: \"node\""},
      {"tm option",
       [](config::Config& c) {
         c.topology_manager_policy_options = {{"fast", "true"}};
       },
       "topologyManagerPolicyOptions: ", "unknown Topology Manager Policy option"},
      {"numa limit",
       [](config::Config& c) {
         c.topology_manager_policy_options = {{"max-allowable-numa-nodes", "1"}};
       },
       "topologyManagerPolicyOptions: ", "should not be less than 8"},
      {"cpu policy", [](config::Config& c) { c.cpu_manager_policy = "dynamic"; },
       "cpuManagerPolicy: ", "unknown policy"},
      {"cpu option",
       [](config::Config& c) {
         c.cpu_manager_policy_options = {{"x", "true"}};
       },
       "cpuManagerPolicyOptions: ", "unknown CPU Manager Policy option"},
      // topologyd has no feature gates: kubelet's defaults apply (alpha options off).
      {"cpu alpha option",
       [](config::Config& c) {
         c.cpu_manager_policy_options = {{"distribute-cpus-across-cores", "true"}};
       },
       "cpuManagerPolicyOptions: ", "Alpha-level Options not enabled"},
      {"none policy options",
       [](config::Config& c) {
         c.cpu_manager_policy = "none";
         c.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
       },
       "cpuManagerPolicyOptions: ", "None policy"},
      {"reserved missing cpu", [](config::Config& c) { c.reserved_system_cpus = "0,99"; },
       "reservedSystemCPUs: ", "99 do not exist"},
      {"reserved syntax", [](config::Config& c) { c.reserved_system_cpus = "0-"; },
       "reservedSystemCPUs: ", ""},
      {"both reservations", [](config::Config& c) { c.cpu_reserved_count = 2; },
       "reservedSystemCPUs: ", "not both"},
      {"no reservation", [](config::Config& c) { c.reserved_system_cpus.reset(); },
       "cpuReservedCount: ", "needs reservedSystemCPUs"},
      {"empty reserved list", [](config::Config& c) { c.reserved_system_cpus = ""; },
       "reservedSystemCPUs: ", "is empty; cpuManagerPolicy static needs at least one reserved CPU"},
      {"blank reserved list", [](config::Config& c) { c.reserved_system_cpus = " "; },
       "reservedSystemCPUs: ", "is empty"},
      {"reserved count above the machine",
       [](config::Config& c) {
         c.reserved_system_cpus.reset();
         c.cpu_reserved_count = 64;
       },
       "cpuReservedCount: ", "cannot reserve 64 CPUs: this machine has 16 (CPUs 0-15)"},
      {"memory policy", [](config::Config& c) { c.memory_manager_policy = "static"; },
       "memoryManagerPolicy: ", "unknown policy: \"static\""},
      {"memory quantity", [](config::Config& c) { c.reserved_memory[0].limits["memory"] = "1Gx"; },
       "reservedMemory[0].limits.memory: ", "invalid quantity"},
      {"memory too large", [](config::Config& c) { c.reserved_memory[0].limits["memory"] = "1Ti"; },
       "reservedMemory: ", ""},
      {"memory unknown node",
       [](config::Config& c) {
         c.reserved_memory.push_back({.numa_node = 7, .limits = {{"memory", "1Gi"}}});
       },
       "reservedMemory: ", ""},
      {"device pool", [](config::Config& c) { c.devices[0].resource_name = "cpu"; },
       "devices: ", ""},
  };
  for (const BadCase& bad : cases) {
    config::Config config = BaseConfig("best-effort");
    bad.change(config);
    absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
    ASSERT_FALSE(node.ok()) << bad.name;
    EXPECT_THAT(std::string(node.status().message()), StartsWith(bad.prefix)) << bad.name;
    EXPECT_THAT(std::string(node.status().message()), HasSubstr(bad.detail)) << bad.name;
  }
}

// The machine's verdict on each manager comes in one run, one line each, whatever the others
// found: an operator fixes them all at once.
TEST(NodePolicyTest, EveryManagersProblemOnTheMachineComesAtOnce) {
  config::Config config = BaseConfig("best-effort");
  config.reserved_system_cpus = "0,99";
  config.reserved_memory.push_back({.numa_node = 7, .limits = {{"memory", "1Gi"}}});
  config.topology_manager_policy_options = {{"prefer-closest-numa-nodes", "true"}};
  topology::Topology machine = Machine(MachineSpec{});
  for (topology::NumaNode& node : machine.numa_nodes) node.distances.clear();
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(node.status().message());
  EXPECT_THAT(message, StartsWith("topologyManagerPolicyOptions: prefer-closest-numa-nodes needs "
                                  "NUMA distances"));
  EXPECT_THAT(message, HasSubstr("\nreservedSystemCPUs: CPUs 99 do not exist"));
  EXPECT_THAT(message, HasSubstr("\nreservedMemory: "));
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 2) << message;
}

// kubelet's maturity gates, under kubelet's names: alpha options only with the alpha gate,
// beta options refused when the beta gate is turned off.
TEST(NodePolicyTest, FeatureGatesDecideWhichOptionMaturityIsAccepted) {
  const topology::Topology machine = Machine(MachineSpec{});
  config::Config config = BaseConfig("best-effort");
  config.cpu_manager_policy_options = {{"distribute-cpus-across-cores", "true"}};
  absl::StatusOr<NodePolicy> refused = BuildNodePolicy(config, machine);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("Alpha-level Options not enabled"));
  config.feature_gates.cpu_manager_policy_alpha_options = true;
  EXPECT_TRUE(BuildNodePolicy(config, machine).ok());

  config = BaseConfig("best-effort");
  config.cpu_manager_policy_options = {{"strict-cpu-reservation", "true"}};  // beta
  EXPECT_TRUE(BuildNodePolicy(config, machine).ok());
  config.feature_gates.cpu_manager_policy_beta_options = false;
  absl::StatusOr<NodePolicy> beta_off = BuildNodePolicy(config, machine);
  ASSERT_FALSE(beta_off.ok());
  EXPECT_THAT(std::string(beta_off.status().message()),
              HasSubstr("Beta-level Options not enabled"));
}

TEST(NodePolicyTest, PreferClosestNeedsDistances) {
  topology::Topology machine = Machine(MachineSpec{});
  for (topology::NumaNode& n : machine.numa_nodes) n.distances.clear();
  config::Config config = BaseConfig("restricted");
  config.topology_manager_policy_options = {{"prefer-closest-numa-nodes", "true"}};
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()),
              StartsWith("topologyManagerPolicyOptions: prefer-closest"));
}

TEST(NodePolicyTest, NumaLimitAppliesToOverridesUnderPolicyNone) {
  const topology::Topology machine =
      Machine(MachineSpec{.packages = 2, .numa_per_package = 8, .cores_per_numa = 1});
  config::Config config = BaseConfig("none");
  config.topology_manager_policy_options = {{"max-allowable-numa-nodes", "8"}};
  EXPECT_TRUE(BuildNodePolicy(config, machine).ok());  // kubelet: none checks nothing
  config.pod_policy_override = true;
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(node.status().message()),
              HasSubstr("unsupported on machines with more than 8 NUMA Nodes"));
}

// kubelet's rule that the reservations add up to Node Allocatable's, checked
// when its settings are given. BaseConfig reserves 1Gi of memory on node 0 and no hugepages.
TEST(NodePolicyTest, ReservedMemoryMustAddUpToNodeAllocatableWhenItIsGiven) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 1});
  using Map = std::map<std::string, std::string>;
  struct Case {
    std::string name;
    std::function<void(config::Config&)> change;
    std::string error;  // "" = valid
  };
  const std::vector<Case> cases = {
      {"not given: not checked", [](config::Config&) {}, ""},
      // 512Mi + 412Mi + kubelet's default eviction threshold 100Mi = 1Gi.
      {"default eviction",
       [](config::Config& c) {
         c.kube_reserved = Map{{"cpu", "500m"}, {"memory", "512Mi"}, {"pid", "1000"}};
         c.system_reserved = Map{{"memory", "412Mi"}};
       },
       ""},
      {"explicit eviction",
       [](config::Config& c) {
         c.kube_reserved = Map{{"memory", "512Mi"}};
         c.eviction_hard = Map{{"memory.available", "512Mi"}, {"nodefs.available", "10%"}};
       },
       ""},
      {"evictionHard set without memory.available counts zero",
       [](config::Config& c) {
         c.system_reserved = Map{{"memory", "1Gi"}};
         c.eviction_hard = Map{{"nodefs.available", "10%"}};
       },
       ""},
      {"too little",
       [](config::Config& c) {
         c.kube_reserved = Map{{"memory", "512Mi"}};
       },
       "reservedMemory: the total amount \"1073741824\" of type \"memory\" is not equal to the "
       "value \"641728512\" determined by Node Allocatable feature"},
      {"a hugepage type on one side only",
       [](config::Config& c) {
         c.kube_reserved = Map{{"memory", "924Mi"}, {"hugepages-1Gi", "1Gi"}};
       },
       "reservedMemory: the total amount \"0\" of type \"hugepages-1Gi\" is not equal to the "
       "value \"1073741824\""},
      {"percentage for memory",
       [](config::Config& c) {
         c.eviction_hard = Map{{"memory.available", "5%"}};
       },
       "evictionHard.memory.available: \"5%\": give memory.available as a quantity"},
      {"bad percentage of another signal",
       [](config::Config& c) {
         c.eviction_hard = Map{{"memory.available", "100Mi"}, {"nodefs.available", "120%"}};
       },
       "evictionHard.nodefs.available: \"120%\": a percentage must be above 0% and at most 100%"},
      {"not a percentage",
       [](config::Config& c) {
         c.eviction_hard = Map{{"imagefs.available", "x%"}};
       },
       "evictionHard.imagefs.available: \"x%\""},
      {"bad quantity",
       [](config::Config& c) {
         c.kube_reserved = Map{{"memory", "1Gx"}};
       },
       "kubeReserved.memory: "},
      {"bad quantity of another resource",
       [](config::Config& c) {
         c.system_reserved = Map{{"cpu", "lots"}};
       },
       "systemReserved.cpu: "},
      {"fractional bytes",
       [](config::Config& c) {
         c.eviction_hard = Map{{"memory.available", "0.5"}};
       },
       "evictionHard.memory.available: \"0.5\" is not a whole"},
  };
  for (const Case& test : cases) {
    config::Config config = BaseConfig("best-effort");
    test.change(config);
    absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
    if (test.error.empty()) {
      EXPECT_TRUE(node.ok()) << test.name << ": " << node.status();
    } else {
      ASSERT_FALSE(node.ok()) << test.name;
      EXPECT_THAT(std::string(node.status().message()), StartsWith(test.error)) << test.name;
    }
  }
  // kubelet checks this for the Static policy only.
  config::Config none = BaseConfig("best-effort");
  none.memory_manager_policy = "None";
  none.kube_reserved = Map{{"memory", "1Ti"}};
  EXPECT_TRUE(BuildNodePolicy(none, machine).ok());
}

TEST(NodePolicyTest, BuildsTheEmptyState) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 2});
  config::Config config = BaseConfig("single-numa-node");
  config.cpu_reserved_count = 2;
  config.reserved_system_cpus.reset();
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->policy, hints::Policy::kSingleNumaNode);
  EXPECT_EQ(node->numa.ids(), (std::vector<int>{0, 1}));
  ASSERT_TRUE(node->cpu.has_value());
  EXPECT_EQ(node->cpu->reserved().Size(), 2);
  // Without strict reservation the reserved CPUs stay in the shared pool.
  EXPECT_EQ(node->empty_state.cpu.default_cpu_set, machine.AllCpus());
  EXPECT_EQ(node->empty_state.memory.machine_state.size(), 2U);
  EXPECT_EQ(node->devices.Find("nvidia.com/gpu")->devices.size(), 4U);
  EXPECT_EQ(node->distances.size(), 2U);
}

TEST(NodePolicyTest, DevicePoolsNeedAnExtendedResourceNameAndOneKindOfDevices) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 1});
  config::Config config = BaseConfig("best-effort");
  config.devices[0].resource_name = "../x";
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()),
              StartsWith("devices: devices[0] (resourceName \"../x\"): not an extended resource "
                         "name"));

  config = BaseConfig("best-effort");
  config.devices[0].devices = {{.id = "fpga0", .numa_nodes = {0}}};
  node = BuildNodePolicy(config, machine);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().message(),
            "devices: devices[0] (resourceName \"nvidia.com/gpu\"): set either `pci` or "
            "`devices`, not both");
}

TEST(NodePolicyTest, WarnsOfAPciPoolThatMatchesNothing) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 2});
  config::Config config = BaseConfig();
  absl::StatusOr<NodePolicy> node = BuildNodePolicy(config, machine);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_THAT(NodePolicyWarnings(*node), ::testing::IsEmpty());

  config.devices.push_back(config::DevicePoolConfig{
      .resource_name = "example.com/vf",
      .pci = config::DevicePciMatch{.vendor = 0x10de,
                                    .device = std::nullopt,
                                    .class_id = 0x0302,
                                    .virtual_functions = true},  // the GPUs are no VFs
      .devices = {}});
  node = BuildNodePolicy(config, machine);
  ASSERT_TRUE(node.ok()) << node.status() << ": an empty pool is valid";
  std::vector<std::string> warnings = NodePolicyWarnings(*node);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], StartsWith("devices: pool example.com/vf matches no PCI device"));
}

}  // namespace
}  // namespace topologyd::admission
