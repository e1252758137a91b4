// The ledger on its own: admissions, re-admissions, bindings and releases keep the providers'
// states and the records in step, raise the generation only when something changed, and
// answer the queries the API and the exports read.
#include "lib/ledger/ledger.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::ledger {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::HasSubstr;

class LedgerTest : public ::testing::Test {
 protected:
  LedgerTest()
      : machine_(Machine(MachineSpec{})),
        policy_(std::make_shared<const admission::NodePolicy>(Node(Config(), machine_))) {}

  static config::Config Config() {
    config::Config c = BaseConfig("single-numa-node");
    c.devices.clear();
    return c;
  }

  Ledger Empty() {
    auto ledger = Ledger::Restore(policy_, state::State{}, "state.json", "config.yaml");
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return *std::move(ledger);
  }

  static std::string Cgroup(const state::PodRecord&) { return "derived/cgroup"; }

  topology::Topology machine_;
  std::shared_ptr<const admission::NodePolicy> policy_;
};

TEST_F(LedgerTest, AdmitsOnceAndAnswersAgainWithoutAChange) {
  Ledger ledger = Empty();
  const pod::Pod pod = Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})});
  auto first = ledger.Admit(pod);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->admitted) << first->message;
  EXPECT_EQ(ledger.generation(), 1u);
  ASSERT_EQ(first->containers.size(), 1u);
  EXPECT_EQ(first->containers[0].cpus.Size(), 2);

  auto again = ledger.Admit(pod);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->admitted);
  EXPECT_EQ(ledger.generation(), 1u);
  EXPECT_EQ(again->containers, first->containers);
  // The checkpoint's records and the providers' states agree: what is exclusive is out of
  // the shared pool.
  EXPECT_FALSE(ledger.shared_pool().Intersects(first->containers[0].cpus));
  EXPECT_EQ(ledger.Snapshot().pods.at("p1").containers[0].cpus, first->containers[0].cpus);
}

TEST_F(LedgerTest, ARefusalChangesNothing) {
  Ledger ledger = Empty();
  const state::State before = ledger.Snapshot();
  auto refused = ledger.Admit(Pod("big", {Ctr("app", {{"cpu", "64"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->admitted);
  EXPECT_EQ(refused->reason, "TopologyAffinityError");
  EXPECT_EQ(ledger.Snapshot(), before);
}

TEST_F(LedgerTest, BindsOnceAndRefusesASecondHolderOfACgroup) {
  Ledger ledger = Empty();
  ASSERT_TRUE(ledger.Admit(Pod("p1", {Ctr("a", {{"cpu", "1"}, {"memory", "1Gi"}})})).ok());
  ASSERT_TRUE(ledger.Admit(Pod("p2", {Ctr("b", {{"cpu", "1"}, {"memory", "1Gi"}})})).ok());
  const uint64_t generation = ledger.generation();
  auto bound = ledger.Bind("p1", "a", "c1", "", Cgroup);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->cgroup, "derived/cgroup");
  EXPECT_EQ(ledger.generation(), generation + 1);
  // The same binding again changes nothing.
  auto repeated = ledger.Bind("p1", "a", "c1", "derived/cgroup", Cgroup);
  ASSERT_TRUE(repeated.ok());
  EXPECT_EQ(ledger.generation(), generation + 1);
  // Another container on that cgroup, or on one below it, is refused.
  auto taken = ledger.Bind("p2", "b", "c2", "derived/cgroup", Cgroup);
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(taken.status().message(), HasSubstr("already bound to pod p1 container a"));
  auto nested = ledger.Bind("p2", "b", "c2", "derived/cgroup/below", Cgroup);
  EXPECT_THAT(nested.status().message(), HasSubstr("nested with the cgroup of pod p1"));
  EXPECT_EQ(ledger.Bind("p9", "b", "c2", "x", Cgroup).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger.generation(), generation + 1);
}

TEST_F(LedgerTest, ReleasesOnlyWhatIsStillBoundWhenAsked) {
  Ledger ledger = Empty();
  ASSERT_TRUE(ledger.Admit(Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})})).ok());
  ASSERT_TRUE(ledger.Bind("p1", "a", "c1", "old/cgroup", Cgroup).ok());
  state::ContainerRecord seen = ledger.Snapshot().pods.at("p1").containers[0];
  ASSERT_TRUE(ledger.Bind("p1", "a", "c2", "new/cgroup", Cgroup).ok());
  EXPECT_EQ(ledger.Release("p1", "a", &seen).code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(ledger.Release("p1", "a").ok());
  EXPECT_TRUE(ledger.Snapshot().pods.empty());
  EXPECT_EQ(ledger.shared_pool(), policy_->empty_state.cpu.default_cpu_set);
  EXPECT_EQ(ledger.Release("p1", std::nullopt).code(), absl::StatusCode::kNotFound);
}

TEST_F(LedgerTest, PerNumaCountsExclusiveReservedAndMemory) {
  Ledger ledger = Empty();
  auto admitted = ledger.Admit(Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(admitted.ok() && admitted->admitted);
  const CpuSet cpus = admitted->containers[0].cpus;
  const std::vector<NumaUsage> usage = ledger.PerNuma();
  ASSERT_EQ(usage.size(), 2u);
  int exclusive = 0;
  uint64_t memory = 0;
  for (const NumaUsage& node : usage) {
    EXPECT_TRUE(node.exclusive_cpus.IsSubsetOf(node.cpus));
    exclusive += node.exclusive_cpus.Size();
    if (auto m = node.memory_used.find("memory"); m != node.memory_used.end()) {
      memory += m->second;
      EXPECT_TRUE(cpus.IsSubsetOf(node.cpus)) << "memory and CPUs on one node";
    }
  }
  EXPECT_EQ(exclusive, 2);
  EXPECT_EQ(memory, kGi);
  EXPECT_EQ(usage[0].reserved_cpus, policy_->cpu->reserved());
}

TEST_F(LedgerTest, RestoreRefusesBindingsAndHoldingsItCannotKeep) {
  state::State records;
  records.pods["p1"] = state::PodRecord{
      .uid = "p1",
      .qos = "Guaranteed",
      .containers = {state::ContainerRecord{.name = "a", .cpus = CpuSet{0}, .exclusive = true}}};
  auto reserved = Ledger::Restore(policy_, records, "state.json", "config.yaml");
  EXPECT_EQ(reserved.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reserved.status().message(),
              HasSubstr("the allocations in state.json cannot be kept with config.yaml"));
  records.pods["p1"].containers[0] =
      state::ContainerRecord{.name = "a", .container_id = "c1", .cgroup = "../escape"};
  auto escaping = Ledger::Restore(policy_, records, "state.json", "config.yaml");
  EXPECT_EQ(escaping.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(escaping.status().message(), HasSubstr("state.json: pod p1 container a: cgroup"));
}

}  // namespace
}  // namespace topologyd::ledger
