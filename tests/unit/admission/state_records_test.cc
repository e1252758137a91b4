// Admission results -> lib/state records -> provider states again, and the conflicts a restart
// must refuse.
#include "lib/admission/state_records.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/ledger/ledger.h"
#include "tests/support/durable_state.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::HasSubstr;
using ::testing::Not;

using ::topologyd::testing::Durable;

class StateRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    machine_ = Machine(MachineSpec{.gpus_per_node = 2});
    node_ = Node(BaseConfig("best-effort"), machine_);
    state_ = node_.empty_state;
    // A block across both nodes first (13Gi fits in no single node; once a node holds
    // single-node blocks, kubelet's group rule keeps multi-node blocks off it).
    Add(Pod("p3", {Ctr("wide", {{"cpu", "1"}, {"memory", "13Gi"}, {"nvidia.com/gpu", "2"}})}));
    Add(Pod(
        "p1",
        {Ctr("a",
             {{"cpu", "2"}, {"memory", "2Gi"}, {"hugepages-1Gi", "1Gi"}, {"nvidia.com/gpu", "1"}}),
         Ctr("b", {{"cpu", "500m"}, {"memory", "1Gi"}})}));
    Add(Pod("p2", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})},
            {Ctr("init", {{"cpu", "3"}, {"memory", "1Gi"}})}));
  }
  void Add(const pod::Pod& pod) {
    AdmissionResult r = MustAdmit(node_, state_, pod);
    ASSERT_TRUE(r.admitted) << r.message;
    state_ = r.new_state;
    records_.pods[pod.uid] = ledger::ToPodRecord(pod, r);
  }
  topology::Topology machine_;
  NodePolicy node_;
  AllocationState state_;
  state::State records_;
};

TEST_F(StateRecordsTest, RecordsDescribeTheAdmission) {
  ASSERT_TRUE(state::Validate(records_).ok());
  const state::PodRecord& p1 = records_.pods.at("p1");
  EXPECT_EQ(p1.namespace_name, "default");
  EXPECT_EQ(p1.qos, "Guaranteed");
  ASSERT_EQ(p1.containers.size(), 2U);
  EXPECT_TRUE(p1.containers[0].exclusive);
  EXPECT_FALSE(p1.containers[1].exclusive);
  EXPECT_EQ(p1.containers[0].devices.at("nvidia.com/gpu").size(), 1U);
  const int n = p1.containers[0].numa_affinity.at(0);
  EXPECT_EQ(p1.containers[0].memory.at(n).at("memory"), 2 * kGi);
  EXPECT_EQ(p1.containers[0].memory.at(n).at("hugepages-1Gi"), kGi);
  EXPECT_TRUE(records_.pods.at("p2").containers[0].init);
  // The wide block lists both nodes; the bytes add up.
  const state::ContainerRecord& wide = records_.pods.at("p3").containers[0];
  ASSERT_EQ(wide.memory.size(), 2U);
  EXPECT_EQ(wide.memory.at(0).at("memory") + wide.memory.at(1).at("memory"), 13 * kGi);
}

TEST_F(StateRecordsTest, RecordsSayWhichInitContainersAreSidecars) {
  const std::map<std::string, std::string> small = {{"cpu", "1"}, {"memory", "256Mi"}};
  Add(Pod("p4", {Ctr("app", small)}, {Ctr("setup", small), Ctr("proxy", small, /*sidecar=*/true)}));
  const std::vector<state::ContainerRecord>& c = records_.pods.at("p4").containers;
  ASSERT_EQ(c.size(), 3U);
  EXPECT_EQ(c[0].name, "setup");
  EXPECT_TRUE(c[0].init);
  EXPECT_FALSE(c[0].restartable);
  EXPECT_EQ(c[1].name, "proxy");
  EXPECT_TRUE(c[1].init);
  EXPECT_TRUE(c[1].restartable);
  EXPECT_FALSE(c[2].init);
  EXPECT_FALSE(c[2].restartable);
}

TEST_F(StateRecordsTest, RestoreRebuildsTheProviderStates) {
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records_);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->cpu, Durable(state_).cpu);
  EXPECT_EQ(restored->devices, state_.devices);
  EXPECT_EQ(restored->memory.assignments, state_.memory.assignments);
  EXPECT_EQ(restored->memory.machine_state, state_.memory.machine_state);
  EXPECT_EQ(RestoreAllocationState(node_, state::State{})->cpu, node_.empty_state.cpu);
}

TEST_F(StateRecordsTest, ReservedCpuIsAConflict) {
  config::Config config = BaseConfig("best-effort");
  const CpuSet held = records_.pods.at("p1").containers[0].cpus;
  config.reserved_system_cpus = std::to_string(held.Min());
  const NodePolicy changed = Node(config, machine_);
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(changed, records_);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(restored.status().message());
  EXPECT_THAT(message, HasSubstr("pod default/pod-p1 (uid p1) container \"a\""));
  EXPECT_THAT(message, HasSubstr("are now reserved"));
  EXPECT_THAT(message, HasSubstr("drain the node"));
}

TEST_F(StateRecordsTest, MissingDeviceAndPoolAreConflicts) {
  state::State records = records_;
  records.pods.at("p1").containers[0].devices["nvidia.com/gpu"] = {"0000:99:00.0"};
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()),
              HasSubstr("device 0000:99:00.0, which is no longer in the pool"));
  EXPECT_THAT(std::string(restored.status().message()), Not(HasSubstr("device plugin's")));
  // A device plugin's id (a kubelet import) against a pool of bus ids: say which pool to declare.
  records.pods.at("p1").containers[0].devices["nvidia.com/gpu"] = {"GPU-4f1c"};
  restored = RestoreAllocationState(node_, records);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()),
              HasSubstr("declare the pool with `devices: [{id, numaNode}]`"));
  config::Config config = BaseConfig("best-effort");
  config.devices.clear();
  restored = RestoreAllocationState(Node(config, machine_), records_);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()),
              HasSubstr("no device pool serves nvidia.com/gpu"));
}

TEST_F(StateRecordsTest, SharedCpuAndDeviceAcrossPodsAreConflicts) {
  state::State records = records_;
  records.pods.at("p2").containers[1].cpus = records.pods.at("p1").containers[0].cpus;
  records.pods.at("p2").containers[1].exclusive = true;
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()), HasSubstr("also held by pod"));
}

TEST_F(StateRecordsTest, PolicyChangesAreConflicts) {
  config::Config config = BaseConfig("best-effort");
  config.memory_manager_policy = "None";
  absl::StatusOr<AllocationState> restored =
      RestoreAllocationState(Node(config, machine_), records_);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()), HasSubstr("memoryManagerPolicy is None"));
  config = BaseConfig("best-effort");
  config.cpu_manager_policy = "none";
  config.reserved_system_cpus.reset();
  restored = RestoreAllocationState(Node(config, machine_), records_);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()), HasSubstr("cpuManagerPolicy is none"));
}

// kubelet's allocator lets a single-node block onto a node of a group (its group rule checks
// only masks of several nodes; MemoryAllocateTest.SingleNodeHintOnGroupedNode), so a restart
// must accept such a state whatever the replay order. Here p4 holds node 1 alone and is
// replayed after p3's group [0,1].
TEST_F(StateRecordsTest, SingleNodeBlockOnAGroupedNodeIsRestored) {
  state::State records = records_;
  state::PodRecord p4 = records.pods.at("p1");
  p4.uid = "p4";
  p4.containers = {records.pods.at("p1").containers[1]};  // shared-pool CPUs, memory only
  p4.containers[0].memory = {{1, {{"memory", 128 * kMi}}}};
  p4.containers[0].numa_affinity = {1};
  records.pods["p4"] = p4;
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records);
  ASSERT_TRUE(restored.ok()) << restored.status();
  ASSERT_EQ(restored->memory.assignments.at("p4").at("b").size(), 1U);
  EXPECT_EQ(restored->memory.assignments.at("p4").at("b")[0].numa_affinity, std::vector<int>{1});
}

// A request of zero for a hugepage size the machine lacks is admitted (0 bytes fit anywhere);
// the restart must not then find a block of a resource that does not exist.
TEST_F(StateRecordsTest, ZeroRequestOfAMissingHugepageSizeSurvivesARestart) {
  Add(Pod("p4", {Ctr("z", {{"cpu", "1"}, {"memory", "128Mi"}, {"hugepages-2Mi", "0"}})}));
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records_);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->memory.assignments, state_.memory.assignments);
}

// After a reboot the kernel reports each node's memory a few KiB smaller or larger (KASLR moves
// the kernel image), which stops kubelet's Static memory manager from starting (it compares
// the stored machine state exactly). Stored totals are not compared here: the allocations are
// replayed onto the machine as it is now, and they still fit.
TEST_F(StateRecordsTest, MemoryTotalsThatMoveByAFewKiBAreNotAConflict) {
  for (const int64_t delta : {int64_t{-12} * 1024, int64_t{8} * 1024}) {
    MachineSpec spec{.gpus_per_node = 2};
    spec.memory_per_node =
        static_cast<uint64_t>(static_cast<int64_t>(spec.memory_per_node) + delta);
    const NodePolicy rebooted = Node(BaseConfig("best-effort"), Machine(spec));
    absl::StatusOr<AllocationState> restored = RestoreAllocationState(rebooted, records_);
    ASSERT_TRUE(restored.ok()) << delta << ": " << restored.status();
    EXPECT_EQ(restored->memory.assignments, state_.memory.assignments) << delta;
    EXPECT_EQ(restored->cpu.assignments, state_.cpu.assignments) << delta;
  }
}

TEST_F(StateRecordsTest, MemoryThatNoLongerFitsIsAConflict) {
  config::Config config = BaseConfig("best-effort");
  config.reserved_memory = {{.numa_node = 0, .limits = {{"memory", "10Gi"}}},
                            {.numa_node = 1, .limits = {{"memory", "10Gi"}}}};
  absl::StatusOr<AllocationState> restored =
      RestoreAllocationState(Node(config, machine_), records_);
  ASSERT_FALSE(restored.ok());
  EXPECT_THAT(std::string(restored.status().message()), HasSubstr("no longer fit"));
}

}  // namespace
}  // namespace topologyd::admission
