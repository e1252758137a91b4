// The PodResources mapping: what List, Get and GetAllocatableResources say for allocations
// and node policies, field by field as the kubelet fills them.
#include "lib/podresources/pod_resources.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/ledger/ledger.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::podresources {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kDev[] = "example.com/dev";

// best-effort, static CPUs with 0-1 reserved, Static memory with 1Gi reserved on node 0, and
// a pool of three listed devices: one on node 0, one on nodes 0 and 1, one without locality.
config::Config TestConfig() {
  config::Config c = BaseConfig("best-effort");
  c.devices = {config::DevicePoolConfig{.resource_name = kDev,
                                        .pci = std::nullopt,
                                        .devices = {{.id = "dev-a", .numa_nodes = {0}},
                                                    {.id = "dev-b", .numa_nodes = {0, 1}},
                                                    {.id = "dev-c", .numa_nodes = {}}}}};
  return c;
}

class PodResourcesTest : public ::testing::Test {
 protected:
  explicit PodResourcesTest(config::Config config = TestConfig())
      : machine_(Machine(MachineSpec{})),
        policy_(std::make_shared<const admission::NodePolicy>(Node(config, machine_))) {
    auto ledger = ledger::Ledger::Restore(policy_, state::State{}, "state.json", "config.yaml");
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    if (ledger.ok()) ledger_.emplace(*std::move(ledger));
  }

  ledger::AdmitOutcome MustAdmit(const pod::Pod& pod) {
    auto outcome = ledger_->Admit(pod);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_TRUE(outcome.ok() && outcome->admitted) << (outcome.ok() ? outcome->message : "");
    return outcome.ok() ? *outcome : ledger::AdmitOutcome{};
  }

  std::vector<PodResources> List() const { return ListPods(ledger_->List(), *policy_); }

  static std::vector<int64_t> Ids(const CpuSet& cpus) {
    std::vector<int64_t> out;
    for (int cpu : cpus) out.push_back(cpu);
    return out;
  }

  topology::Topology machine_;
  std::shared_ptr<const admission::NodePolicy> policy_;
  std::optional<ledger::Ledger> ledger_;
};

TEST_F(PodResourcesTest, ExclusiveCpusOnlyForExclusiveContainers) {
  ledger::AdmitOutcome guaranteed =
      MustAdmit(Pod("g", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  pod::Pod burstable = Pod("b", {BestEffort("web")});
  burstable.containers[0].requests["cpu"] = *pod::Quantity::Parse("500m");
  MustAdmit(burstable);

  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 2u);
  // In uid order: "b", then "g".
  EXPECT_EQ(pods[0].name, "pod-b");
  EXPECT_EQ(pods[0].namespace_name, "default");
  ASSERT_EQ(pods[0].containers.size(), 1u);
  EXPECT_EQ(pods[0].containers[0].name, "web");
  EXPECT_THAT(pods[0].containers[0].cpu_ids, IsEmpty());  // the shared pool is not shown
  ASSERT_EQ(pods[1].containers.size(), 1u);
  ASSERT_EQ(guaranteed.containers.size(), 1u);
  EXPECT_EQ(pods[1].containers[0].cpu_ids, Ids(guaranteed.containers[0].cpus));
  EXPECT_EQ(pods[1].containers[0].cpu_ids.size(), 2u);
}

TEST_F(PodResourcesTest, DevicesOneEntryPerDeviceAndNumaNode) {
  MustAdmit(Pod("d", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}, {kDev, "3"}})}));
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  ASSERT_EQ(pods[0].containers.size(), 1u);
  std::vector<DeviceEntry> devices = pods[0].containers[0].devices;
  std::sort(devices.begin(), devices.end(), [](const DeviceEntry& a, const DeviceEntry& b) {
    return std::tie(a.device_id, a.numa_node) < std::tie(b.device_id, b.numa_node);
  });
  EXPECT_THAT(devices,
              ElementsAre(DeviceEntry{kDev, "dev-a", 0}, DeviceEntry{kDev, "dev-b", 0},
                          DeviceEntry{kDev, "dev-b", 1}, DeviceEntry{kDev, "dev-c", std::nullopt}));
}

TEST_F(PodResourcesTest, MemoryBlocksPerType) {
  ledger::AdmitOutcome admitted = MustAdmit(
      Pod("m", {Ctr("app", {{"cpu", "2"}, {"memory", "2Gi"}, {"hugepages-1Gi", "1Gi"}})}));
  ASSERT_EQ(admitted.containers.size(), 1u);
  ASSERT_EQ(admitted.containers[0].memory.size(), 1u);  // one node: the pod fits on one
  const int node = admitted.containers[0].memory.begin()->first;
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_THAT(pods[0].containers[0].memory, ElementsAre(MemoryBlock{"hugepages-1Gi", kGi, {node}},
                                                        MemoryBlock{"memory", 2 * kGi, {node}}));
}

TEST_F(PodResourcesTest, AMultiNodeBlockHasEveryNodeOfItsAffinity) {
  // The records list every node of a block, with 0 bytes where it took none.
  state::State records;
  records.pods["u"] = state::PodRecord{
      .uid = "u",
      .namespace_name = "ns",
      .name = "wide",
      .qos = "Guaranteed",
      .containers = {state::ContainerRecord{
          .name = "app", .memory = {{0, {{"memory", 14 * kGi}}}, {1, {{"memory", 0}}}}}}};
  std::vector<PodResources> pods = ListPods(ledger::ListOf(records, {}, {}), *policy_);
  ASSERT_EQ(pods.size(), 1u);
  ASSERT_EQ(pods[0].containers.size(), 1u);
  EXPECT_THAT(pods[0].containers[0].memory, ElementsAre(MemoryBlock{"memory", 14 * kGi, {0, 1}}));
}

TEST_F(PodResourcesTest, SidecarsFirstAndRegularInitContainersLeftOut) {
  MustAdmit(Pod("s", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}})},
                {Ctr("setup", {{"cpu", "1"}, {"memory", "1Gi"}}),
                 Ctr("proxy", {{"cpu", "1"}, {"memory", "1Gi"}}, /*sidecar=*/true)}));
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  std::vector<std::string> names;
  for (const ContainerResources& c : pods[0].containers) names.push_back(c.name);
  EXPECT_THAT(names, ElementsAre("proxy", "app"));
}

TEST_F(PodResourcesTest, AdmittedPodsAreListedBeforeTheyAreBound) {
  MustAdmit(Pod("a", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(ledger_->Snapshot().pods.at("a").containers[0].container_id.empty());
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].containers[0].cpu_ids.size(), 1u);
}

TEST_F(PodResourcesTest, AReleasedContainerOrPodIsGone) {
  MustAdmit(Pod("r", {Ctr("one", {{"cpu", "1"}, {"memory", "1Gi"}}),
                      Ctr("two", {{"cpu", "1"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(ledger_->Release("r", std::string("one")).ok());
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  ASSERT_EQ(pods[0].containers.size(), 1u);
  EXPECT_EQ(pods[0].containers[0].name, "two");
  ASSERT_TRUE(ledger_->Release("r", std::nullopt).ok());
  EXPECT_THAT(List(), IsEmpty());
}

TEST_F(PodResourcesTest, GetFindsByNamespaceAndName) {
  MustAdmit(Pod("x", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}})}));
  std::optional<PodResources> found = FindPod(ledger_->List(), *policy_, "default", "pod-x");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, List()[0]);
  EXPECT_FALSE(FindPod(ledger_->List(), *policy_, "other", "pod-x").has_value());
  EXPECT_FALSE(FindPod(ledger_->List(), *policy_, "default", "pod-y").has_value());
  EXPECT_EQ(PodNotFoundMessage("default", "pod-y"), "pod pod-y in namespace default not found");
}

TEST_F(PodResourcesTest, AllocatableIsEverythingButWhatIsReserved) {
  AllocatableResources a = Allocatable(*policy_);
  // 16 CPUs, 0-1 reserved.
  EXPECT_EQ(a.cpu_ids, Ids(CpuSet::Range(2, 15)));
  // Per node: MemTotal minus the 4 1Gi hugepages, minus 1Gi reserved on node 0.
  EXPECT_THAT(a.memory, ElementsAre(MemoryBlock{"hugepages-1Gi", 4 * kGi, {0}},
                                    MemoryBlock{"memory", 11 * kGi, {0}},
                                    MemoryBlock{"hugepages-1Gi", 4 * kGi, {1}},
                                    MemoryBlock{"memory", 12 * kGi, {1}}));
  EXPECT_THAT(a.devices,
              ElementsAre(DeviceEntry{kDev, "dev-a", 0}, DeviceEntry{kDev, "dev-b", 0},
                          DeviceEntry{kDev, "dev-b", 1}, DeviceEntry{kDev, "dev-c", std::nullopt}));
  // What is held does not change what is allocatable.
  MustAdmit(Pod("h", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}, {kDev, "1"}})}));
  EXPECT_EQ(Allocatable(*policy_), a);
}

class PodResourcesWithoutPoliciesTest : public PodResourcesTest {
 protected:
  static config::Config NoPolicies() {
    config::Config c = TestConfig();
    c.cpu_manager_policy = "none";
    c.reserved_system_cpus.reset();
    c.topology_manager_policy = "none";
    c.memory_manager_policy = "None";
    c.reserved_memory.clear();
    return c;
  }
  PodResourcesWithoutPoliciesTest() : PodResourcesTest(NoPolicies()) {}
};

TEST_F(PodResourcesWithoutPoliciesTest, NoCpusAndNoMemoryButDevices) {
  AllocatableResources a = Allocatable(*policy_);
  EXPECT_THAT(a.cpu_ids, IsEmpty());
  EXPECT_THAT(a.memory, IsEmpty());
  EXPECT_EQ(a.devices.size(), 4u);
  MustAdmit(Pod("n", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}, {kDev, "1"}})}));
  std::vector<PodResources> pods = List();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_THAT(pods[0].containers[0].cpu_ids, IsEmpty());
  EXPECT_THAT(pods[0].containers[0].memory, IsEmpty());
  EXPECT_EQ(pods[0].containers[0].devices.size(), 1u);
}

}  // namespace
}  // namespace topologyd::podresources
