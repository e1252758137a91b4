// The ledger on its own: admissions, re-admissions, explanations, bindings (the binding rules)
// and releases keep the providers' states and the records in step, raise the generation only
// when something changed, restore only what the node can keep, and answer the queries the API
// and the exports read.
#include "lib/ledger/ledger.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::ledger {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::Contains;
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
  const state::ContainerRecord seen = ledger.Snapshot().pods.at("p1").containers[0];
  const ReleaseGuard still_bound{.container_id = seen.container_id, .cgroup = seen.cgroup};
  ASSERT_TRUE(ledger.Bind("p1", "a", "c2", "new/cgroup", Cgroup).ok());
  const uint64_t generation = ledger.generation();
  EXPECT_EQ(ledger.Release("p1", "a", &still_bound).code(), absl::StatusCode::kAborted);
  // By runtime container id alone: the old instance is not the one bound, so nothing changes.
  const ReleaseGuard old_instance{.container_id = "c1", .cgroup = std::nullopt};
  absl::Status refused = ledger.Release("p1", "a", &old_instance);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("is bound to runtime container c2, not c1"));
  EXPECT_EQ(ledger.generation(), generation);
  EXPECT_EQ(ledger.Snapshot().pods.at("p1").containers.size(), 1u);
  EXPECT_EQ(ledger.Release("p9", "a", &old_instance).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger.Release("p1", "b", &old_instance).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger.Release("p1", std::nullopt, &old_instance).code(),
            absl::StatusCode::kInvalidArgument);
  const ReleaseGuard bad_id{.container_id = "../x", .cgroup = std::nullopt};
  EXPECT_EQ(ledger.Release("p1", "a", &bad_id).code(), absl::StatusCode::kInvalidArgument);
  const ReleaseGuard current{.container_id = "c2", .cgroup = std::nullopt};
  ASSERT_TRUE(ledger.Release("p1", "a", &current).ok());
  EXPECT_EQ(ledger.generation(), generation + 1);
  ASSERT_TRUE(ledger.Admit(Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})})).ok());
  ASSERT_TRUE(ledger.Release("p1", "a").ok());
  EXPECT_TRUE(ledger.Snapshot().pods.empty());
  EXPECT_EQ(ledger.shared_pool(), policy_->empty_state.cpu.default_cpu_set);
  EXPECT_EQ(ledger.Release("p1", std::nullopt).code(), absl::StatusCode::kNotFound);
}

// A caller that learns a pod's containers one at a time admits each as it comes: the
// containers the pod does not hold yet are allocated, the held ones keep what they hold.
TEST_F(LedgerTest, AdmittingAContainerNotHeldYetKeepsTheOthers) {
  Ledger ledger = Empty();
  const pod::Container a = Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}});
  const pod::Container b = Ctr("b", {{"cpu", "2"}, {"memory", "1Gi"}});
  auto first = ledger.Admit(Pod("p1", {a}));
  ASSERT_TRUE(first.ok() && first->admitted);
  ASSERT_TRUE(ledger.Bind("p1", "a", "ca", "pod/ca", Cgroup).ok());
  const state::ContainerRecord held_a = ledger.Snapshot().pods.at("p1").containers[0];
  const uint64_t generation = ledger.generation();

  auto both = ledger.Admit(Pod("p1", {a, b}));
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_TRUE(both->admitted) << both->message;
  EXPECT_EQ(ledger.generation(), generation + 1);
  ASSERT_EQ(both->containers.size(), 2u);
  EXPECT_EQ(both->containers[0], held_a) << "a keeps its CPUs and its binding";
  EXPECT_EQ(both->containers[1].name, "b");
  EXPECT_EQ(both->containers[1].cpus.Size(), 2);
  EXPECT_FALSE(both->containers[1].cpus.Intersects(held_a.cpus));
  EXPECT_FALSE(ledger.shared_pool().Intersects(both->containers[1].cpus));

  // Sending {a} again (or {b} alone) answers with every container the pod holds.
  auto again = ledger.Admit(Pod("p1", {a}));
  ASSERT_TRUE(again.ok() && again->admitted);
  EXPECT_EQ(again->containers, both->containers);
  EXPECT_EQ(ledger.generation(), generation + 1);

  // A container sent alone, without the held ones: they keep their records.
  auto c = ledger.Admit(Pod("p1", {Ctr("c", {{"cpu", "1"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(c.ok() && c->admitted) << c->message;
  ASSERT_EQ(ledger.Snapshot().pods.at("p1").containers.size(), 3u);
  EXPECT_EQ(ledger.generation(), generation + 2);
}

TEST_F(LedgerTest, ARefusedContainerNotHeldYetLeavesTheHeldOnesIntact) {
  Ledger ledger = Empty();
  const pod::Container a = Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}});
  ASSERT_TRUE(ledger.Admit(Pod("p1", {a})).ok());
  const state::State before = ledger.Snapshot();
  const CpuSet pool = ledger.shared_pool();
  auto refused = ledger.Admit(Pod("p1", {a, Ctr("b", {{"cpu", "64"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->admitted);
  EXPECT_THAT(refused->message, HasSubstr("pod p1 stays admitted with what its containers hold; "
                                          "containers not held yet were not allocated: b"));
  EXPECT_EQ(ledger.Snapshot(), before);
  EXPECT_EQ(ledger.shared_pool(), pool);
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

TEST(LedgerContainerStartTest, FreesTheMemoryOfFinishedInitContainersAsKubeletDoes) {
  // One NUMA node: 16Gi less 4Gi of huge pages less 1Gi reserved = 11Gi for containers.
  const topology::Topology machine = Machine(MachineSpec{.packages = 1});
  auto policy =
      std::make_shared<const admission::NodePolicy>(Node(BaseConfig("single-numa-node"), machine));
  auto restored = Ledger::Restore(policy, state::State{}, "state.json", "config.yaml");
  ASSERT_TRUE(restored.ok()) << restored.status();
  Ledger ledger = *std::move(restored);
  // The sidecar and the app take 64Mi and 2Gi of the init container's 8Gi over: 8Gi are held,
  // 3Gi free.
  const pod::Pod p = Pod("p", {Ctr("app", {{"cpu", "1"}, {"memory", "2Gi"}})},
                         {Ctr("setup", {{"cpu", "1"}, {"memory", "8Gi"}}),
                          Ctr("proxy", {{"cpu", "1"}, {"memory", "64Mi"}}, /*sidecar=*/true)});
  ASSERT_TRUE(ledger.Admit(p)->admitted);
  const pod::Pod q = Pod("q", {Ctr("app", {{"cpu", "1"}, {"memory", "5Gi"}})});
  ASSERT_FALSE(ledger.Admit(q)->admitted);

  // The first container's start frees nothing: nothing ran before it.
  const uint64_t generation = ledger.generation();
  ASSERT_TRUE(ledger.ContainerStarted("p", "setup").ok());
  EXPECT_EQ(ledger.generation(), generation);
  ASSERT_FALSE(ledger.Admit(q)->admitted);

  // When the sidecar starts, `setup` has finished: the 8Gi less what the others took over
  // are free, and its record holds no memory any more.
  ASSERT_TRUE(ledger.ContainerStarted("p", "proxy").ok());
  EXPECT_EQ(ledger.generation(), generation + 1);
  const state::PodRecord record = ledger.Snapshot().pods.at("p");
  ASSERT_EQ(record.containers[0].name, "setup");
  EXPECT_TRUE(record.containers[0].memory.empty());
  EXPECT_FALSE(record.containers[1].memory.empty());
  EXPECT_FALSE(record.containers[2].memory.empty());
  // A later start (and a second one) changes nothing more.
  ASSERT_TRUE(ledger.ContainerStarted("p", "app").ok());
  ASSERT_TRUE(ledger.ContainerStarted("p", "proxy").ok());
  EXPECT_EQ(ledger.generation(), generation + 1);
  EXPECT_EQ(ledger.ContainerStarted("p", "nope").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger.ContainerStarted("nope", "app").code(), absl::StatusCode::kNotFound);

  // The saved records restore to the same free memory.
  auto again = Ledger::Restore(policy, ledger.Snapshot(), "state.json", "config.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->Admit(q)->admitted);
  EXPECT_TRUE(ledger.Admit(q)->admitted);
}

TEST_F(LedgerTest, BindingAContainerIsItsStart) {
  Ledger ledger = Empty();
  const pod::Pod p = Pod("p", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}})},
                         {Ctr("setup", {{"cpu", "1"}, {"memory", "4Gi"}})});
  ASSERT_TRUE(ledger.Admit(p)->admitted);
  EXPECT_FALSE(ledger.Snapshot().pods.at("p").containers[0].memory.empty());
  ASSERT_TRUE(ledger.Bind("p", "app", "c1", "", Cgroup).ok());
  EXPECT_TRUE(ledger.Snapshot().pods.at("p").containers[0].memory.empty());
}

// The node of the engine's tests (tests/unit/engine/engine_test.cc), whose rules these were:
// 16 CPUs on two NUMA nodes, the static CPU policy with CPU 0 reserved, best-effort, no memory
// manager and no devices.
class LedgerEngineNodeTest : public ::testing::Test {
 protected:
  static config::Config Config() {
    config::Config c;
    c.cpu_manager_policy = "static";
    c.reserved_system_cpus = "0";
    c.topology_manager_policy = "best-effort";
    return c;
  }

  Ledger Empty(const config::Config& config = Config()) {
    auto policy = std::make_shared<const admission::NodePolicy>(Node(config, machine_));
    auto ledger = Ledger::Restore(std::move(policy), state::State{}, "state.json", "config.yaml");
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return *std::move(ledger);
  }

  // Container "app" asking for `cpu` and 1Gi, requests == limits.
  static pod::Pod OnePod(const std::string& uid, const std::string& cpu) {
    return Pod(uid, {Ctr("app", {{"cpu", cpu}, {"memory", "1Gi"}})});
  }
  // Containers "app" and "side", each asking for `cpu`.
  static pod::Pod TwoContainerPod(const std::string& uid, const std::string& cpu) {
    return Pod(uid, {Ctr("app", {{"cpu", cpu}, {"memory", "1Gi"}}),
                     Ctr("side", {{"cpu", cpu}, {"memory", "1Gi"}})});
  }

  static std::string Cgroup(const state::PodRecord&) { return "derived/cgroup"; }

  topology::Topology machine_ = Machine(MachineSpec{});
};

TEST_F(LedgerEngineNodeTest, ExplainDecidesLikeAdmitWithoutChangingState) {
  Ledger ledger = Empty();
  auto explained = ledger.Explain(OnePod("pod-e", "4"));
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_TRUE(explained->admitted);
  EXPECT_FALSE(explained->explanation.merges.empty());
  EXPECT_EQ(ledger.generation(), 0u);
  auto admitted = ledger.Admit(OnePod("pod-e", "4"));
  ASSERT_TRUE(admitted.ok());
  EXPECT_EQ(admitted->containers[0].cpus, explained->containers[0].cpus);
}

TEST_F(LedgerEngineNodeTest, ExplainOfAnAdmittedPodShowsWhatAdmitReturns) {
  // full-pcpus-only refuses before it looks at held CPUs (kubelet's re-admission), while Admit
  // answers an admitted uid with what it holds: the decision must be Admit's.
  config::Config config = Config();
  config.cpu_manager_policy_options["full-pcpus-only"] = "true";
  config.reserved_system_cpus = "0-1";  // core 0
  Ledger ledger = Empty(config);
  auto admitted = ledger.Admit(OnePod("full", "14"));
  ASSERT_TRUE(admitted.ok() && admitted->admitted) << admitted->message;
  auto again = ledger.Admit(OnePod("full", "14"));
  ASSERT_TRUE(again.ok() && again->admitted);
  auto explained = ledger.Explain(OnePod("full", "14"));
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_TRUE(explained->admitted) << explained->message;
  ASSERT_EQ(explained->containers.size(), 1u);
  EXPECT_EQ(explained->containers[0].cpus, admitted->containers[0].cpus);
  EXPECT_THAT(explained->explanation.notes, Contains(HasSubstr("pod full is already admitted")));
}

TEST_F(LedgerEngineNodeTest, ReAdmissionAllocatesAContainerReleasedAlone) {
  Ledger ledger = Empty();
  const pod::Pod two = TwoContainerPod("two", "2");
  auto first = ledger.Admit(two);
  ASSERT_TRUE(first.ok() && first->admitted);
  ASSERT_TRUE(ledger.Bind("two", "app", "c-app", "pods/two-app", Cgroup).ok());
  ASSERT_TRUE(ledger.Release("two", "side").ok());
  const uint64_t before = ledger.generation();

  auto again = ledger.Admit(two);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(again->admitted) << again->message;
  ASSERT_EQ(again->containers.size(), 2u);
  EXPECT_GT(ledger.generation(), before);
  const state::ContainerRecord& app =
      again->containers[0].name == "app" ? again->containers[0] : again->containers[1];
  const state::ContainerRecord& side =
      again->containers[0].name == "side" ? again->containers[0] : again->containers[1];
  EXPECT_EQ(app.cpus, first->containers[0].cpus) << "a container that stayed was moved";
  EXPECT_EQ(app.container_id, "c-app") << "a container that stayed lost its binding";
  EXPECT_EQ(app.cgroup, "pods/two-app");
  EXPECT_TRUE(side.exclusive);
  EXPECT_EQ(side.cpus.Size(), 2);
  EXPECT_FALSE(side.cpus.Intersects(app.cpus));
  auto side_bound = ledger.Bind("two", "side", "c-side", "pods/two-side", Cgroup);
  EXPECT_TRUE(side_bound.ok()) << side_bound.status();
  // Complete again: idempotent.
  const uint64_t complete = ledger.generation();
  auto third = ledger.Admit(two);
  ASSERT_TRUE(third.ok() && third->admitted);
  EXPECT_FALSE(third->decided);
  EXPECT_EQ(ledger.generation(), complete);
}

TEST_F(LedgerEngineNodeTest, RefusedReAdmissionKeepsWhatTheOtherContainersHold) {
  Ledger ledger = Empty();
  const pod::Pod two = TwoContainerPod("two", "2");
  ASSERT_TRUE(ledger.Admit(two).ok());
  ASSERT_TRUE(ledger.Release("two", "side").ok());
  auto filler = ledger.Admit(OnePod("filler", "13"));  // the 13 CPUs left
  ASSERT_TRUE(filler.ok() && filler->admitted) << filler->message;
  const Allocations before = ledger.List();

  auto again = ledger.Admit(two);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->admitted);
  EXPECT_THAT(again->message, HasSubstr("stays admitted"));
  EXPECT_THAT(again->message, HasSubstr("side"));
  const Allocations after = ledger.List();
  EXPECT_EQ(after.state.generation, before.state.generation);
  EXPECT_EQ(after.state.pods.at("two").containers.size(), 1u);
  EXPECT_EQ(after.shared_pool, before.shared_pool);
}

TEST_F(LedgerEngineNodeTest, BindRefusesUnknownPodsAndUnsafePaths) {
  Ledger ledger = Empty();
  ASSERT_TRUE(ledger.Admit(OnePod("p", "1")).ok());
  EXPECT_EQ(ledger.Bind("nope", "app", "c1", "", Cgroup).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger.Bind("p", "nope", "c1", "", Cgroup).status().code(),
            absl::StatusCode::kNotFound);
  for (const char* bad : {"../escape", "/etc", "a/../../b", "a\nb"}) {
    EXPECT_EQ(ledger.Bind("p", "app", "c1", bad, Cgroup).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ledger.Bind("p", "app", "../c1", "", Cgroup).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LedgerEngineNodeTest, BindRefusesCgroupsNestedWithAnotherContainersAndReusedIds) {
  Ledger ledger = Empty();
  ASSERT_TRUE(ledger.Admit(OnePod("a", "2")).ok());
  ASSERT_TRUE(ledger.Admit(OnePod("b", "2")).ok());
  ASSERT_TRUE(ledger.Bind("a", "app", "c1", "kubepods/poda/c1", Cgroup).ok());
  for (const char* nested :
       {"kubepods/poda/c1", "kubepods/poda", "kubepods", "kubepods/poda/c1/x"}) {
    auto bound = ledger.Bind("b", "app", "c2", nested, Cgroup);
    EXPECT_EQ(bound.status().code(), absl::StatusCode::kInvalidArgument) << nested;
    EXPECT_THAT(bound.status().message(), HasSubstr("pod a container app")) << nested;
  }
  auto same_id = ledger.Bind("b", "app", "c1", "kubepods/podb/c1", Cgroup);
  EXPECT_EQ(same_id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(same_id.status().message(), HasSubstr("container_id: c1 is already bound"));
  // A sibling whose name only starts the same is not nested; rebinding a container is fine.
  EXPECT_TRUE(ledger.Bind("b", "app", "c2", "kubepods/poda/c10", Cgroup).ok());
  EXPECT_TRUE(ledger.Bind("a", "app", "c3", "kubepods/poda/c3", Cgroup).ok());
}

// A state file passes its checksum yet holds bindings Bind would refuse (it was edited, or
// written by hand): the ledger is not restored from it, so start-up stops before any cgroup is
// touched.
TEST_F(LedgerEngineNodeTest, RestoreRefusesBindingsBindWouldRefuse) {
  struct Case {
    const char* name;
    std::function<void(state::State&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"escaping path", [](state::State& s) { s.pods["a"].containers[0].cgroup = "../../x"; },
       "pod a container app: cgroup: "},
      {"nested cgroups",
       [](state::State& s) {
         s.pods["a"].containers[0].cgroup = "kubepods/pa";
         s.pods["b"].containers[0].cgroup = "kubepods/pa/c";
       },
       "inside the cgroup kubepods/pa of pod a container app"},
      {"shared container id",
       [](state::State& s) {
         s.pods["a"].containers[0].container_id = "c1";
         s.pods["b"].containers[0].container_id = "c1";
       },
       "bound to the same container id c1"},
      {"odd uid",
       [](state::State& s) {
         s.pods["../x"] = s.pods["a"];
         s.pods["../x"].uid = "../x";
       },
       "pod uid \"../x\" is not 1 to 64 of [A-Za-z0-9-]"},
  };
  auto policy = std::make_shared<const admission::NodePolicy>(Node(Config(), machine_));
  for (const Case& c : cases) {
    state::State written;
    written.generation = 3;
    for (const char* uid : {"a", "b"}) {
      written.pods[uid] =
          state::PodRecord{.uid = uid, .containers = {state::ContainerRecord{.name = "app"}}};
    }
    c.edit(written);
    auto restored = Ledger::Restore(policy, written, "state.json", "config.yaml");
    ASSERT_FALSE(restored.ok()) << c.name;
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
    EXPECT_THAT(std::string(restored.status().message()), HasSubstr(c.expect)) << c.name;
  }
}

}  // namespace
}  // namespace topologyd::ledger
