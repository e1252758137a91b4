// The NodeResourceTopology builder on hand-built machines: zones, costs from the distances,
// reserved CPUs and memory taken from allocatable, what running containers hold taken from
// available (init containers that have finished left out), hugepages, device pools, CPU-less
// NUMA nodes, the attributes and the fingerprint, and the JSON form.
#include "lib/nrt/node_resource_topology.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/nrt/nrt_json.h"
#include "lib/nrt/pod_fingerprint.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::nrt {
namespace {

using admission::testing::BaseConfig;
using admission::testing::kGi;
using admission::testing::Machine;
using admission::testing::MachineSpec;
using admission::testing::Node;
using ::testing::ElementsAre;

constexpr int64_t kGiB = static_cast<int64_t>(kGi);

// 2 packages x 1 NUMA node x 4 cores x 2 threads: node 0 = CPUs 0-7, node 1 = CPUs 8-15;
// 16Gi per node with 4 x 1Gi hugepages; one GPU per node (0000:10:00.0, 0000:11:00.0).
MachineSpec TwoNodes() {
  MachineSpec spec;
  spec.gpus_per_node = 1;
  return spec;
}

const Zone& ZoneNamed(const NodeResourceTopology& nrt, const std::string& name) {
  for (const Zone& z : nrt.zones) {
    if (z.name == name) return z;
  }
  static const Zone kNone;
  ADD_FAILURE() << "no zone " << name;
  return kNone;
}

ResourceInfo Resource(const Zone& zone, const std::string& name) {
  for (const ResourceInfo& r : zone.resources) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << zone.name << " has no " << name;
  return {};
}

std::vector<std::string> ResourceNames(const Zone& zone) {
  std::vector<std::string> names;
  for (const ResourceInfo& r : zone.resources) names.push_back(r.name);
  return names;
}

std::string Attribute(const NodeResourceTopology& nrt, const std::string& name) {
  for (const AttributeInfo& a : nrt.attributes) {
    if (a.name == name) return a.value;
  }
  ADD_FAILURE() << "no attribute " << name;
  return "";
}

state::ContainerRecord Exclusive(std::string name, CpuSet cpus) {
  state::ContainerRecord c;
  c.name = std::move(name);
  c.cpus = std::move(cpus);
  c.exclusive = true;
  return c;
}

TEST(NodeResourceTopologyTest, EmptyNodeZonesCostsAndReservations) {
  const topology::Topology machine = Machine(TwoNodes());
  const admission::NodePolicy policy = Node(BaseConfig("single-numa-node"), machine);
  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, {}, "worker-7");

  EXPECT_EQ(nrt.name, "worker-7");
  ASSERT_EQ(nrt.zones.size(), 2U);
  EXPECT_EQ(nrt.zones[0].name, "node-0");
  EXPECT_EQ(nrt.zones[1].name, "node-1");
  EXPECT_EQ(nrt.zones[0].type, "Node");
  EXPECT_THAT(nrt.zones[0].costs, ElementsAre(CostInfo{"node-0", 10}, CostInfo{"node-1", 21}));
  EXPECT_THAT(nrt.zones[1].costs, ElementsAre(CostInfo{"node-0", 21}, CostInfo{"node-1", 10}));
  EXPECT_THAT(ResourceNames(nrt.zones[0]),
              ElementsAre("cpu", "memory", "hugepages-1Gi", "nvidia.com/gpu"));

  // Reserved CPUs 0-1 are on node 0: capacity counts them, allocatable does not.
  EXPECT_EQ(Resource(nrt.zones[0], "cpu"), (ResourceInfo{"cpu", 8, 6, 6}));
  EXPECT_EQ(Resource(nrt.zones[1], "cpu"), (ResourceInfo{"cpu", 8, 8, 8}));
  // Memory: capacity is the node's memory, hugepages included; allocatable leaves out the
  // hugepage pool (4Gi) and reservedMemory (1Gi on node 0).
  EXPECT_EQ(Resource(nrt.zones[0], "memory"),
            (ResourceInfo{"memory", 16 * kGiB, 11 * kGiB, 11 * kGiB}));
  EXPECT_EQ(Resource(nrt.zones[1], "memory"),
            (ResourceInfo{"memory", 16 * kGiB, 12 * kGiB, 12 * kGiB}));
  // Hugepages in bytes, not pages.
  EXPECT_EQ(Resource(nrt.zones[1], "hugepages-1Gi"),
            (ResourceInfo{"hugepages-1Gi", 4 * kGiB, 4 * kGiB, 4 * kGiB}));
  EXPECT_EQ(Resource(nrt.zones[1], "nvidia.com/gpu"), (ResourceInfo{"nvidia.com/gpu", 1, 1, 1}));

  EXPECT_EQ(Attribute(nrt, "topologyManagerPolicy"), "single-numa-node");
  EXPECT_EQ(Attribute(nrt, "topologyManagerScope"), "container");
  // topologyd's own limit, not kubelet's 8: the scheduler bounds its NUMA ids by it.
  EXPECT_EQ(Attribute(nrt, "topologyManagerMaxNUMANodes"), "64");
  EXPECT_EQ(Attribute(nrt, "nodeTopologyPodsFingerprint"), PodFingerprint().Sign());
  EXPECT_EQ(Attribute(nrt, "nodeTopologyPodsFingerprintMethod"), "all");
  EXPECT_THAT(nrt.topology_policies, ElementsAre("SingleNUMANodeContainerLevel"));
}

TEST(NodeResourceTopologyTest, AvailableIsAllocatableMinusWhatRunningContainersHold) {
  const topology::Topology machine = Machine(TwoNodes());
  const admission::NodePolicy policy = Node(BaseConfig("single-numa-node"), machine);
  state::State records;
  state::PodRecord& pod = records.pods["u1"];
  pod.uid = "u1";
  pod.namespace_name = "default";
  pod.name = "gpu-job";
  pod.qos = "Guaranteed";
  state::ContainerRecord app = Exclusive("app", CpuSet({8, 9, 10, 11}));
  app.memory = {{1, {{"memory", 2 * kGi}, {"hugepages-1Gi", kGi}}}};
  app.devices = {{"nvidia.com/gpu", {"0000:11:00.0"}}};
  // A sidecar keeps running beside the app: counted.
  state::ContainerRecord sidecar = Exclusive("proxy", CpuSet({14}));
  sidecar.init = true;
  sidecar.restartable = true;
  // A regular init container has finished: what it held is not held now.
  state::ContainerRecord init = Exclusive("setup", CpuSet({12, 13}));
  init.init = true;
  init.memory = {{1, {{"memory", kGi}}}};
  pod.containers = {init, sidecar, app};
  // A shared-pool container holds no CPU exclusively.
  state::PodRecord& burstable = records.pods["u2"];
  burstable.uid = "u2";
  burstable.namespace_name = "default";
  burstable.name = "web";
  state::ContainerRecord shared;
  shared.name = "web";
  shared.cpus = CpuSet({2, 3, 4, 5, 6, 7, 15});
  burstable.containers = {shared};

  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, records, "n");
  const Zone& node0 = ZoneNamed(nrt, "node-0");
  const Zone& node1 = ZoneNamed(nrt, "node-1");
  EXPECT_EQ(Resource(node0, "cpu"), (ResourceInfo{"cpu", 8, 6, 6}));
  EXPECT_EQ(Resource(node1, "cpu"), (ResourceInfo{"cpu", 8, 8, 3}));
  EXPECT_EQ(Resource(node1, "memory").available, 10 * kGiB);
  EXPECT_EQ(Resource(node1, "hugepages-1Gi").available, 3 * kGiB);
  EXPECT_EQ(Resource(node1, "nvidia.com/gpu"), (ResourceInfo{"nvidia.com/gpu", 1, 1, 0}));
  EXPECT_EQ(Resource(node0, "nvidia.com/gpu").available, 1);
  EXPECT_EQ(Resource(node0, "memory").available, 11 * kGiB);

  PodFingerprint expected;
  expected.Add("default", "gpu-job");
  expected.Add("default", "web");
  EXPECT_EQ(Attribute(nrt, "nodeTopologyPodsFingerprint"), expected.Sign());
}

TEST(NodeResourceTopologyTest, PodsWithoutANameAreLeftOutOfTheFingerprint) {
  const topology::Topology machine = Machine(TwoNodes());
  const admission::NodePolicy policy = Node(BaseConfig("single-numa-node"), machine);
  state::State records;
  records.pods["imported"].uid = "imported";  // from kubelet's checkpoints: uid only
  records.pods["imported"].containers = {Exclusive("c", CpuSet({10}))};
  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, records, "n");
  EXPECT_EQ(Attribute(nrt, "nodeTopologyPodsFingerprint"), PodFingerprint().Sign());
  // What it holds still counts.
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-1"), "cpu").available, 7);
}

TEST(NodeResourceTopologyTest, PolicyNoneGivesNoExclusiveCpusAndNoMemoryZones) {
  const topology::Topology machine = Machine(TwoNodes());
  config::Config config = BaseConfig("none");
  config.cpu_manager_policy = "none";
  config.reserved_system_cpus.reset();
  config.memory_manager_policy = "None";
  config.reserved_memory.clear();
  const admission::NodePolicy policy = Node(config, machine);
  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, {}, "n");
  // As kubelet's GetAllocatableResources: no exclusive CPUs, no per-NUMA memory.
  EXPECT_EQ(Resource(nrt.zones[0], "cpu"), (ResourceInfo{"cpu", 8, 0, 0}));
  EXPECT_THAT(ResourceNames(nrt.zones[0]), ElementsAre("cpu", "nvidia.com/gpu"));
  EXPECT_EQ(Attribute(nrt, "topologyManagerPolicy"), "none");
  EXPECT_THAT(nrt.topology_policies, ElementsAre("None"));
}

TEST(NodeResourceTopologyTest, CpuLessNumaNodesAreZonesWithMemoryAndNoCpus) {
  MachineSpec spec = TwoNodes();
  spec.cpuless_per_package = 1;
  const topology::Topology machine = Machine(spec);
  const admission::NodePolicy policy = Node(BaseConfig("best-effort"), machine);
  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, {}, "n");
  ASSERT_EQ(nrt.zones.size(), 4U);
  const Zone& hbm = ZoneNamed(nrt, "node-2");
  EXPECT_EQ(Resource(hbm, "cpu"), (ResourceInfo{"cpu", 0, 0, 0}));
  EXPECT_EQ(Resource(hbm, "memory"), (ResourceInfo{"memory", 96 * kGiB, 96 * kGiB, 96 * kGiB}));
  EXPECT_THAT(ResourceNames(hbm), ElementsAre("cpu", "memory"));
  // Its costs: 10 to itself, 11 to its package's CPU node, 21 across.
  EXPECT_THAT(hbm.costs, ElementsAre(CostInfo{"node-0", 11}, CostInfo{"node-1", 21},
                                     CostInfo{"node-2", 10}, CostInfo{"node-3", 21}));
}

// The worked example NFD's layout is usually explained with: 2 sockets x 2 NUMA nodes of 16
// CPUs, 64Gi each with 8 x 1Gi hugepages, 1Gi reservedMemory and two reserved CPUs on node 0,
// single-numa-node at pod scope; one Guaranteed pod on node 1 holding 6 CPUs, 16Gi memory,
// 4Gi of 1Gi hugepages and node 1's GPU.
TEST(NodeResourceTopologyTest, WorkedExampleTwoSocketsFourNumaNodes) {
  MachineSpec spec;
  spec.numa_per_package = 2;
  spec.cores_per_numa = 8;
  spec.memory_per_node = 64 * kGi;
  spec.hugepages_1g_per_node = 8;
  spec.gpus_per_node = 1;
  const topology::Topology machine = Machine(spec);
  config::Config config = BaseConfig("single-numa-node");
  config.topology_manager_scope = "pod";
  const admission::NodePolicy policy = Node(config, machine);
  state::State records;
  state::PodRecord& pod = records.pods["u1"];
  pod.uid = "u1";
  pod.namespace_name = "ml";
  pod.name = "trainer";
  state::ContainerRecord app = Exclusive("app", CpuSet({16, 17, 18, 19, 20, 21}));
  app.memory = {{1, {{"memory", 16 * kGi}, {"hugepages-1Gi", 4 * kGi}}}};
  app.devices = {{"nvidia.com/gpu", {"0000:11:00.0"}}};
  pod.containers = {app};

  const NodeResourceTopology nrt = BuildNodeResourceTopology(policy, records, "worker-7");
  ASSERT_EQ(nrt.zones.size(), 4U);
  EXPECT_THAT(nrt.topology_policies, ElementsAre("SingleNUMANodePodLevel"));
  EXPECT_THAT(ZoneNamed(nrt, "node-0").costs,
              ElementsAre(CostInfo{"node-0", 10}, CostInfo{"node-1", 11}, CostInfo{"node-2", 21},
                          CostInfo{"node-3", 21}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-0"), "cpu"), (ResourceInfo{"cpu", 16, 14, 14}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-1"), "cpu"), (ResourceInfo{"cpu", 16, 16, 10}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-0"), "memory"),
            (ResourceInfo{"memory", 68719476736, 59055800320, 59055800320}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-1"), "memory"),
            (ResourceInfo{"memory", 68719476736, 60129542144, 42949672960}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-1"), "hugepages-1Gi"),
            (ResourceInfo{"hugepages-1Gi", 8589934592, 8589934592, 4294967296}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-1"), "nvidia.com/gpu"),
            (ResourceInfo{"nvidia.com/gpu", 1, 1, 0}));
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-3"), "nvidia.com/gpu").available, 1);
  EXPECT_EQ(Resource(ZoneNamed(nrt, "node-2"), "memory").available, 60129542144);
}

TEST(NodeResourceTopologyTest, DeprecatedTopologyPoliciesAsNfdWritesThem) {
  using admission::Scope;
  using hints::Policy;
  EXPECT_EQ(DeprecatedTopologyPolicy(Policy::kSingleNumaNode, Scope::kPod),
            "SingleNUMANodePodLevel");
  EXPECT_EQ(DeprecatedTopologyPolicy(Policy::kRestricted, Scope::kContainer),
            "RestrictedContainerLevel");
  EXPECT_EQ(DeprecatedTopologyPolicy(Policy::kBestEffort, Scope::kPod), "BestEffortPodLevel");
  EXPECT_EQ(DeprecatedTopologyPolicy(Policy::kNone, Scope::kPod), "None");
}

TEST(NodeResourceTopologyTest, PodScopeIsAnAttribute) {
  const topology::Topology machine = Machine(TwoNodes());
  config::Config config = BaseConfig("restricted");
  config.topology_manager_scope = "pod";
  const NodeResourceTopology nrt = BuildNodeResourceTopology(Node(config, machine), {}, "n");
  EXPECT_EQ(Attribute(nrt, "topologyManagerScope"), "pod");
  EXPECT_THAT(nrt.topology_policies, ElementsAre("RestrictedPodLevel"));
}

TEST(NodeResourceTopologyTest, JsonIsTheKubernetesObject) {
  const topology::Topology machine = Machine(TwoNodes());
  const NodeResourceTopology nrt =
      BuildNodeResourceTopology(Node(BaseConfig("single-numa-node"), machine), {}, "worker-7");
  const nlohmann::json j = ToJson(nrt);
  EXPECT_EQ(j.at("apiVersion"), "topology.node.k8s.io/v1alpha2");
  EXPECT_EQ(j.at("kind"), "NodeResourceTopology");
  EXPECT_EQ(j.at("metadata").at("name"), "worker-7");
  const nlohmann::json& cpu = j.at("zones").at(0).at("resources").at(0);
  EXPECT_EQ(cpu,
            (nlohmann::json{
                {"name", "cpu"}, {"capacity", "8"}, {"allocatable", "6"}, {"available", "6"}}));
  EXPECT_EQ(j.at("zones").at(0).at("costs").at(1),
            (nlohmann::json{{"name", "node-1"}, {"value", 21}}));
  EXPECT_EQ(j.at("topologyPolicies"), nlohmann::json::array({"SingleNUMANodeContainerLevel"}));
}

}  // namespace
}  // namespace topologyd::nrt
