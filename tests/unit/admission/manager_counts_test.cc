// What an admission tells kubelet's manager metrics (AdmissionResult::counts): the CPU and
// Memory managers' Allocate calls that pin, and those that failed, as kubelet counts them.
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/admission/admission.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

class ManagerCountsTest : public ::testing::Test {
 protected:
  void Use(const config::Config& config) {
    MachineSpec spec;
    spec.gpus_per_node = 1;
    topology_ = Machine(spec);
    node_ = Node(config, topology_);
    state_ = node_.empty_state;
  }
  topology::Topology topology_;
  NodePolicy node_;
  AllocationState state_;
};

TEST_F(ManagerCountsTest, GuaranteedContainersPinCpusAndMemory) {
  Use(BaseConfig("best-effort"));
  // Two containers with integer CPUs, one with a fraction: all three pin memory (the pod is
  // Guaranteed), two pin CPUs.
  AdmissionResult r = MustAdmit(node_, state_,
                                Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}}),
                                           Ctr("b", {{"cpu", "1"}, {"memory", "1Gi"}}),
                                           Ctr("c", {{"cpu", "500m"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_EQ(r.counts.cpu.requests, 2);
  EXPECT_EQ(r.counts.cpu.errors, 0);
  EXPECT_EQ(r.counts.memory.requests, 3);
  EXPECT_EQ(r.counts.memory.errors, 0);
  EXPECT_EQ(r.counts.cpu_full_pcpus.requests, 0);
}

TEST_F(ManagerCountsTest, BurstablePodsPinNothing) {
  Use(BaseConfig("best-effort"));
  pod::Container burstable = Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}});
  burstable.limits.clear();
  AdmissionResult r = MustAdmit(node_, state_, Pod("p1", {burstable}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_EQ(r.counts.cpu.requests, 0);
  EXPECT_EQ(r.counts.memory.requests, 0);
}

TEST_F(ManagerCountsTest, AFailedCpuAllocationIsARequestAndAnError) {
  config::Config config = BaseConfig("best-effort");
  config.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
  Use(config);
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "3"}, {"memory", "1Gi"}})}));
  ASSERT_FALSE(r.admitted);
  EXPECT_EQ(r.counts.cpu.requests, 1);
  EXPECT_EQ(r.counts.cpu.errors, 1);
  EXPECT_EQ(r.counts.cpu_full_pcpus.requests, 1);
  EXPECT_EQ(r.counts.cpu_full_pcpus.errors, 1);
  // The CPU manager failed first: the Memory manager was not asked.
  EXPECT_EQ(r.counts.memory.requests, 0);
}

TEST_F(ManagerCountsTest, AFailedMemoryAllocationCountsForTheMemoryManager) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "1"}, {"memory", "40Gi"}})}));
  ASSERT_FALSE(r.admitted);
  EXPECT_EQ(r.counts.cpu.requests, 1);
  EXPECT_EQ(r.counts.cpu.errors, 0);
  EXPECT_EQ(r.counts.memory.requests, 1);
  EXPECT_EQ(r.counts.memory.errors, 1);
}

TEST_F(ManagerCountsTest, ARefusedMergeAllocatesNothing) {
  Use(BaseConfig("single-numa-node"));
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "1"}, {"memory", "40Gi"}})}));
  ASSERT_FALSE(r.admitted);
  EXPECT_EQ(r.counts.cpu.requests, 0);
  EXPECT_EQ(r.counts.memory.requests, 0);
}

}  // namespace
}  // namespace topologyd::admission
