// kubelet's CFS quota rule for exclusive CPUs on what admission decides: only a container the
// static policy gives CPUs of its own runs without a quota, and only while the gate is on.
#include "lib/admission/cpu_quota.h"

#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

AdmissionResult AdmitOn(const config::Config& config, const pod::Pod& pod) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = Node(config, machine);
  return MustAdmit(node, node.empty_state, pod);
}

// An init container and an app container with whole CPUs, a fractional one beside them.
pod::Pod MixedPod() {
  return Pod("p1",
             {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}}),
              Ctr("helper", {{"cpu", "500m"}, {"memory", "256Mi"}})},
             {Ctr("setup", {{"cpu", "1"}, {"memory", "256Mi"}})});
}

TEST(CpuQuotaTest, ContainersWithExclusiveCpusRunWithoutAQuotaWhileTheGateIsOn) {
  AdmissionResult r = AdmitOn(BaseConfig(), MixedPod());
  ASSERT_TRUE(r.admitted) << r.message;
  ASSERT_TRUE(Find(r, "app")->exclusive);
  EXPECT_TRUE(CpuQuotaUnlimited(true, *Find(r, "app")));
  EXPECT_TRUE(CpuQuotaUnlimited(true, *Find(r, "setup")));
  // On the shared pool: kubelet's quota stays.
  ASSERT_FALSE(Find(r, "helper")->exclusive);
  EXPECT_FALSE(CpuQuotaUnlimited(true, *Find(r, "helper")));
  // The gate off: kubelet's quota everywhere, as before v1.33.
  for (const state::ContainerRecord& c : r.containers) EXPECT_FALSE(CpuQuotaUnlimited(false, c));
}

TEST(CpuQuotaTest, TheNonePolicyGivesNoContainerCpusOfItsOwn) {
  config::Config config = BaseConfig();
  config.cpu_manager_policy = "none";
  config.reserved_system_cpus.reset();
  AdmissionResult r = AdmitOn(config, MixedPod());
  ASSERT_TRUE(r.admitted) << r.message;
  for (const state::ContainerRecord& c : r.containers) {
    EXPECT_FALSE(CpuQuotaUnlimited(true, c)) << c.name;
  }
}

TEST(CpuQuotaTest, AnExclusiveRecordWithoutCpusKeepsTheQuota) {
  // kubelet asks whether its state holds CPUs for the container; an empty set is none.
  state::ContainerRecord record;
  record.name = "app";
  record.exclusive = true;
  EXPECT_FALSE(CpuQuotaUnlimited(true, record));
}

}  // namespace
}  // namespace topologyd::admission
