// Table tests of the admission rules: scopes, provider order, reuse, rejection reasons and
// messages, all-or-nothing, per-pod overrides, policy none, Explain and Release.
#include "lib/admission/admission.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/admission/reasons.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// 2 sockets x 1 NUMA node x 4 cores x 2 threads: node 0 = CPUs 0-7, node 1 = CPUs 8-15.
// Reserved CPUs 0-1. One GPU per node (0000:10:00.0 on node 0, 0000:11:00.0 on node 1).
MachineSpec TwoNodes() {
  MachineSpec spec;
  spec.gpus_per_node = 1;
  return spec;
}

class AdmissionTest : public ::testing::Test {
 protected:
  void Use(const config::Config& config, const MachineSpec& spec = TwoNodes()) {
    topology_ = Machine(spec);
    node_ = Node(config, topology_);
    state_ = node_.empty_state;
  }
  topology::Topology topology_;
  NodePolicy node_;
  AllocationState state_;
};

TEST_F(AdmissionTest, GuaranteedContainerGetsExclusiveCpusOnOneNode) {
  Use(BaseConfig("single-numa-node"));
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "4"}, {"memory", "2Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_EQ(r.reason, "");
  ASSERT_EQ(r.containers.size(), 1U);
  const state::ContainerRecord& app = r.containers[0];
  EXPECT_TRUE(app.exclusive);
  EXPECT_EQ(app.cpus.Size(), 4);
  ASSERT_EQ(app.numa_affinity.size(), 1U);
  const CpuSet node_cpus = topology_.numa_nodes[app.numa_affinity[0]].cpus;
  EXPECT_TRUE(app.cpus.IsSubsetOf(node_cpus));
  EXPECT_EQ(state::MemoryNodes(app), app.numa_affinity);
  EXPECT_FALSE(r.new_state.cpu.default_cpu_set.Intersects(app.cpus));
  // The explanation shows one merge with the three providers in kubelet's order.
  ASSERT_EQ(r.explanation.merges.size(), 1U);
  ASSERT_EQ(r.explanation.merges[0].providers.size(), 3U);
  EXPECT_EQ(r.explanation.merges[0].providers[0].provider, "devices");
  EXPECT_EQ(r.explanation.merges[0].providers[1].provider, "cpu");
  EXPECT_EQ(r.explanation.merges[0].providers[2].provider, "memory");
  EXPECT_TRUE(r.explanation.merges[0].merged.admit);
}

TEST_F(AdmissionTest, BurstableContainerRunsInTheSharedPool) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r = MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "500m"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_FALSE(r.containers[0].exclusive);
  EXPECT_EQ(r.containers[0].cpus, node_.empty_state.cpu.default_cpu_set);
  EXPECT_THAT(state::MemoryNodes(r.containers[0]), IsEmpty());
  EXPECT_EQ(r.new_state, state_);
}

TEST_F(AdmissionTest, SharedContainersSeeThePoolAfterThePodsExclusiveCpus) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r = MustAdmit(node_, state_,
                                Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}}),
                                           Ctr("b", {{"cpu", "500m"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  // Pod QoS is Guaranteed (requests == limits) but b's request is fractional: shared.
  EXPECT_TRUE(r.containers[0].exclusive);
  EXPECT_FALSE(r.containers[1].exclusive);
  EXPECT_EQ(r.containers[1].cpus, r.new_state.cpu.default_cpu_set);
  EXPECT_FALSE(r.containers[1].cpus.Intersects(r.containers[0].cpus));
}

TEST_F(AdmissionTest, SingleNumaNodeRejectsWhatNoNodeHoldsWithKubeletsReason) {
  Use(BaseConfig("single-numa-node"));
  // 10 CPUs: more than a node's 8 (node 0 has only 6 free).
  const pod::Pod pod = Pod("p1", {Ctr("big", {{"cpu", "10"}, {"memory", "1Gi"}})});
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kTopologyAffinityError);
  EXPECT_THAT(r.message, StartsWith(std::string(kTopologyAffinityMessage)));
  EXPECT_THAT(r.message, HasSubstr("container \"big\""));
  EXPECT_THAT(r.message, HasSubstr("single-numa-node"));
  EXPECT_THAT(r.message, HasSubstr("cpu: "));
  EXPECT_THAT(r.containers, IsEmpty());
  EXPECT_EQ(r.new_state, state_);
  ASSERT_EQ(r.explanation.merges.size(), 1U);
  EXPECT_FALSE(r.explanation.merges[0].merged.admit);
}

TEST_F(AdmissionTest, RestrictedRejectsWhenGpuAndCpusCannotShareANode) {
  Use(BaseConfig("restricted"));
  // Two GPUs exist only across both nodes: the device list prefers {0,1} (the narrowest mask
  // whose capacity covers 2), while CPUs and memory prefer single nodes. No mask is preferred
  // by every list, so restricted rejects.
  const pod::Pod pod =
      Pod("p1", {Ctr("app", {{"cpu", "4"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "2"}})});
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kTopologyAffinityError);
  EXPECT_THAT(r.message, HasSubstr("policy restricted"));
  EXPECT_THAT(r.message, HasSubstr("nvidia.com/gpu: preferred [0,1]"));
  EXPECT_EQ(r.new_state, state_);
}

TEST_F(AdmissionTest, GpuPullsTheCpusToItsNode) {
  Use(BaseConfig("single-numa-node"));
  // Take node 1's GPU first so that the second pod's GPU must be node 0's.
  AdmissionResult first =
      MustAdmit(node_, state_,
                Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})}));
  ASSERT_TRUE(first.admitted) << first.message;
  const int first_node = first.containers[0].numa_affinity.at(0);
  AdmissionResult second =
      MustAdmit(node_, first.new_state,
                Pod("p2", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})}));
  ASSERT_TRUE(second.admitted) << second.message;
  const state::ContainerRecord& c = second.containers[0];
  ASSERT_EQ(c.numa_affinity.size(), 1U);
  EXPECT_NE(c.numa_affinity[0], first_node);
  EXPECT_TRUE(c.cpus.IsSubsetOf(topology_.numa_nodes[c.numa_affinity[0]].cpus));
  ASSERT_EQ(c.devices.at("nvidia.com/gpu").size(), 1U);
  EXPECT_EQ(state::MemoryNodes(c), c.numa_affinity);
}

TEST_F(AdmissionTest, LaterContainerFailureRollsBackEarlierContainers) {
  Use(BaseConfig("best-effort"));
  // The first container gets CPUs and a GPU; the second asks for 3 GPUs of 2: best-effort
  // admits the merge, the device manager's Allocate fails.
  const pod::Pod pod =
      Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}}),
                 Ctr("b", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "3"}})});
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kUnexpectedAdmissionError);
  EXPECT_THAT(r.message, StartsWith("Allocate failed due to requested number of devices "
                                    "unavailable for nvidia.com/gpu"));
  EXPECT_THAT(r.message, HasSubstr("which is unexpected (container \"b\", device manager"));
  EXPECT_EQ(r.new_state, state_);
  EXPECT_THAT(r.containers, IsEmpty());
  EXPECT_EQ(r.explanation.merges.size(), 2U);
}

// What the user asked and what is free come first; kubelet's text, which counts what is left
// inside the placement, follows as kubelet words it.
TEST_F(AdmissionTest, TooFewFreeCpusSaysWhatWasAskedAndWhatIsFreeBeforeKubeletsText) {
  Use(BaseConfig("none"));
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("big", {{"cpu", "64"}, {"memory", "1Gi"}})}));
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kUnexpectedAdmissionError);
  EXPECT_THAT(r.message,
              StartsWith("the container asks 64 CPUs, 14 are free for exclusive use; kubelet: "
                         "Allocate failed due to not enough cpus available to satisfy request: "
                         "requested=64, available=14, which is unexpected (container \"big\", "
                         "cpu manager"));
  EXPECT_EQ(r.new_state, state_);
}

TEST_F(AdmissionTest, FullPcpusOnlyRejectsOddCountsWithSmtAlignmentError) {
  config::Config config = BaseConfig("best-effort");
  config.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
  Use(config);
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "3"}, {"memory", "1Gi"}})}));
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kSmtAlignmentError);
  EXPECT_THAT(r.message, StartsWith("SMT Alignment Error: requested 3 cpus not multiple cpus "
                                    "per core = 2"));
  EXPECT_THAT(r.message, HasSubstr("container \"app\", cpu manager"));
  EXPECT_EQ(r.new_state, state_);
}

TEST_F(AdmissionTest, MemoryThatFitsNowhereIsUnexpectedAdmissionErrorUnderBestEffort) {
  Use(BaseConfig("best-effort"));
  // 40Gi fits on no mask: memory's lists are empty, best-effort admits the merge and the
  // memory manager's Allocate fails.
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "1"}, {"memory", "40Gi"}})}));
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kUnexpectedAdmissionError);
  EXPECT_THAT(r.message, HasSubstr("[memorymanager]"));
  EXPECT_THAT(r.message, HasSubstr("memory manager"));
  EXPECT_EQ(r.new_state, state_);
}

// kubelet's memory "no fit" rule: the empty memory lists make the merged hint non-preferred, so
// restricted and single-numa-node refuse the pod at the merge.
TEST_F(AdmissionTest, MemoryThatFitsNowhereIsTopologyAffinityErrorUnderRestricted) {
  for (const char* policy : {"restricted", "single-numa-node"}) {
    Use(BaseConfig(policy));
    AdmissionResult r =
        MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "1"}, {"memory", "40Gi"}})}));
    EXPECT_FALSE(r.admitted) << policy;
    EXPECT_EQ(r.reason, kTopologyAffinityError) << policy;
    EXPECT_EQ(r.new_state, state_) << policy;
  }
}

TEST_F(AdmissionTest, AppContainerReusesInitContainerCpus) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r = MustAdmit(node_, state_,
                                Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})},
                                    {Ctr("init", {{"cpu", "4"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  const state::ContainerRecord* init = Find(r, "init");
  const state::ContainerRecord* app = Find(r, "app");
  ASSERT_NE(init, nullptr);
  ASSERT_NE(app, nullptr);
  EXPECT_TRUE(init->init);
  EXPECT_FALSE(app->init);
  EXPECT_EQ(r.containers[0].name, "init");  // init containers first
  EXPECT_TRUE(app->cpus.IsSubsetOf(init->cpus));
}

TEST_F(AdmissionTest, SidecarCpusAreNotReused) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r =
      MustAdmit(node_, state_,
                Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})},
                    {Ctr("side", {{"cpu", "2"}, {"memory", "1Gi"}}, /*sidecar=*/true)}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_FALSE(Find(r, "app")->cpus.Intersects(Find(r, "side")->cpus));
}

TEST_F(AdmissionTest, PodScopeAlignsAllContainersToOneNode) {
  config::Config config = BaseConfig("single-numa-node");
  config.topology_manager_scope = "pod";
  Use(config);
  AdmissionResult r = MustAdmit(node_, state_,
                                Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}}),
                                           Ctr("b", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  ASSERT_EQ(r.explanation.merges.size(), 1U);
  EXPECT_FALSE(r.explanation.merges[0].container.has_value());
  EXPECT_EQ(r.containers[0].numa_affinity, r.containers[1].numa_affinity);
  const CpuSet node_cpus = topology_.numa_nodes[r.containers[0].numa_affinity.at(0)].cpus;
  EXPECT_TRUE(r.containers[0].cpus.Union(r.containers[1].cpus).IsSubsetOf(node_cpus));
}

TEST_F(AdmissionTest, PodScopeRejectsATotalNoNodeHoldsThatContainerScopeAdmits) {
  config::Config config = BaseConfig("single-numa-node");
  const pod::Pod pod = Pod("p1", {Ctr("a", {{"cpu", "6"}, {"memory", "1Gi"}}),
                                  Ctr("b", {{"cpu", "6"}, {"memory", "1Gi"}})});
  Use(config);
  EXPECT_TRUE(MustAdmit(node_, state_, pod).admitted);
  config.topology_manager_scope = "pod";
  Use(config);
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kTopologyAffinityError);
  EXPECT_THAT(r.message, HasSubstr("Topology locality: pod (policy single-numa-node)"));
}

TEST_F(AdmissionTest, PolicyNoneAllocatesWithoutMerging) {
  Use(BaseConfig("none"));
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "10"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(r.explanation.merges, IsEmpty());
  EXPECT_TRUE(r.containers[0].exclusive);
  EXPECT_EQ(r.containers[0].cpus.Size(), 10);
  EXPECT_THAT(r.containers[0].numa_affinity, IsEmpty());
  EXPECT_THAT(r.explanation.notes, ElementsAre(HasSubstr("policy none")));
}

TEST_F(AdmissionTest, CpuManagerNoneGivesEveryContainerAllCpus) {
  config::Config config = BaseConfig("best-effort");
  config.cpu_manager_policy = "none";
  config.reserved_system_cpus.reset();
  Use(config);
  AdmissionResult r =
      MustAdmit(node_, state_, Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_FALSE(r.containers[0].exclusive);
  EXPECT_EQ(r.containers[0].cpus, topology_.AllCpus());
}

TEST_F(AdmissionTest, AnnotationIgnoredWhenOverrideIsOff) {
  Use(BaseConfig("best-effort"));
  const pod::Pod pod = Pod("p1", {Ctr("big", {{"cpu", "10"}, {"memory", "1Gi"}})}, {},
                           {{std::string(kPolicyAnnotation), "single-numa-node"}});
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_TRUE(r.admitted) << r.message;
  EXPECT_EQ(r.explanation.policy, hints::Policy::kBestEffort);
  EXPECT_THAT(r.explanation.notes, ElementsAre(HasSubstr("ignored")));
}

TEST_F(AdmissionTest, AnnotationChoosesThePolicyWhenOverrideIsOn) {
  config::Config config = BaseConfig("best-effort");
  config.pod_policy_override = true;
  Use(config);
  const pod::Pod strict = Pod("p1", {Ctr("big", {{"cpu", "10"}, {"memory", "1Gi"}})}, {},
                              {{std::string(kPolicyAnnotation), "single-numa-node"}});
  AdmissionResult r = MustAdmit(node_, state_, strict);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kTopologyAffinityError);
  EXPECT_EQ(r.explanation.policy, hints::Policy::kSingleNumaNode);
  // Looser than the node is allowed too.
  config.topology_manager_policy = "single-numa-node";
  Use(config);
  const pod::Pod loose = Pod("p1", {Ctr("big", {{"cpu", "10"}, {"memory", "1Gi"}})}, {},
                             {{std::string(kPolicyAnnotation), "best-effort"}});
  EXPECT_TRUE(MustAdmit(node_, state_, loose).admitted);
}

TEST_F(AdmissionTest, ScopeAnnotationChoosesPodScope) {
  config::Config config = BaseConfig("single-numa-node");
  config.pod_policy_override = true;
  Use(config);
  const pod::Pod pod = Pod(
      "p1",
      {Ctr("a", {{"cpu", "6"}, {"memory", "1Gi"}}), Ctr("b", {{"cpu", "6"}, {"memory", "1Gi"}})},
      {}, {{std::string(kScopeAnnotation), "pod"}});
  AdmissionResult r = MustAdmit(node_, state_, pod);
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.explanation.scope, Scope::kPod);
}

TEST_F(AdmissionTest, InvalidAnnotationIsRejectedWhenOverrideIsOn) {
  config::Config config = BaseConfig("best-effort");
  config.pod_policy_override = true;
  Use(config);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string_view, std::string>>{{kPolicyAnnotation, "strict"},
                                                             {kPolicyAnnotation, "Restricted"},
                                                             {kScopeAnnotation, "node"}}) {
    const pod::Pod pod =
        Pod("p1", {Ctr("a", {{"cpu", "1"}, {"memory", "1Gi"}})}, {}, {{std::string(key), value}});
    AdmissionResult r = MustAdmit(node_, state_, pod);
    EXPECT_FALSE(r.admitted) << value;
    EXPECT_EQ(r.reason, kInvalidTopologyPolicyAnnotation);
    EXPECT_THAT(r.message, HasSubstr(std::string(key)));
    EXPECT_THAT(r.message, HasSubstr("\"" + value + "\""));
    EXPECT_EQ(r.new_state, state_);
  }
}

TEST_F(AdmissionTest, InvalidAnnotationIsIgnoredWhenOverrideIsOff) {
  Use(BaseConfig("best-effort"));
  const pod::Pod pod = Pod("p1", {Ctr("a", {{"cpu", "1"}, {"memory", "1Gi"}})}, {},
                           {{std::string(kPolicyAnnotation), "strict"}});
  EXPECT_TRUE(MustAdmit(node_, state_, pod).admitted);
}

TEST_F(AdmissionTest, ExplainIsAdmitWithoutTheState) {
  Use(BaseConfig("single-numa-node"));
  const pod::Pod pod =
      Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})});
  AdmissionResult admitted = MustAdmit(node_, state_, pod);
  absl::StatusOr<AdmissionResult> explained = Explain(node_, state_, pod);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_EQ(explained->admitted, admitted.admitted);
  EXPECT_EQ(explained->containers, admitted.containers);
  EXPECT_EQ(explained->explanation, admitted.explanation);
  EXPECT_EQ(explained->new_state, AllocationState{});
}

TEST_F(AdmissionTest, ReleaseReturnsEverything) {
  Use(BaseConfig("best-effort"));
  AdmissionResult r = MustAdmit(node_, state_,
                                Pod("p1",
                                    {Ctr("a", {{"cpu", "2"},
                                               {"memory", "1Gi"},
                                               {"hugepages-1Gi", "2Gi"},
                                               {"nvidia.com/gpu", "1"}}),
                                     Ctr("b", {{"cpu", "3"}, {"memory", "1Gi"}})},
                                    {Ctr("init", {{"cpu", "4"}, {"memory", "2Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_NE(r.new_state, state_);
  AllocationState after = Release(node_, r.new_state, "p1");
  EXPECT_EQ(after, state_);
  // Per container, then the rest.
  AllocationState partial = Release(node_, r.new_state, "p1", "a");
  EXPECT_TRUE(device::ContainerDeviceIds(partial.devices, "p1", "a", "nvidia.com/gpu").empty());
  EXPECT_FALSE(partial.cpu.Assignment("p1", "a").has_value());
  EXPECT_TRUE(partial.cpu.Assignment("p1", "b").has_value());
  EXPECT_EQ(Release(node_, partial, "p1"), state_);
  // Unknown pods change nothing.
  EXPECT_EQ(Release(node_, r.new_state, "nope"), r.new_state);
}

TEST_F(AdmissionTest, ReadmissionKeepsWhatThePodHolds) {
  Use(BaseConfig("single-numa-node"));
  const pod::Pod pod = Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})});
  AdmissionResult first = MustAdmit(node_, state_, pod);
  ASSERT_TRUE(first.admitted);
  AdmissionResult again = MustAdmit(node_, first.new_state, pod);
  ASSERT_TRUE(again.admitted) << again.message;
  EXPECT_EQ(again.containers, first.containers);
}

// The sequence that gave one CPU to two running containers: a pod whose sidecar was released
// and which is admitted again. Replaying the init container's reuse bookkeeping offered the
// sidecar CPU 6, which the kept app container had taken over from the init container.
TEST_F(AdmissionTest, ReadmittedSidecarDoesNotTakeACpuAKeptAppContainerHolds) {
  config::Config config = BaseConfig("best-effort", "0");
  config.memory_manager_policy = "None";
  config.reserved_memory.clear();
  Use(config, MachineSpec{.packages = 1, .numa_per_package = 2, .gpus_per_node = 0});
  AdmissionResult bg =
      MustAdmit(node_, state_, Pod("bg-1", {Ctr("c", {{"cpu", "3"}, {"memory", "64Mi"}})}));
  ASSERT_TRUE(bg.admitted) << bg.message;
  EXPECT_EQ(Find(bg, "c")->cpus, CpuSet({1, 2, 3}));
  const pod::Pod p = Pod("p-1",
                         {Ctr("app", {{"cpu", "2"}, {"memory", "64Mi"}}),
                          Ctr("app2", {{"cpu", "2"}, {"memory", "64Mi"}})},
                         {Ctr("init", {{"cpu", "3"}, {"memory", "64Mi"}}),
                          Ctr("side", {{"cpu", "1"}, {"memory", "64Mi"}}, /*sidecar=*/true)});
  AdmissionResult first = MustAdmit(node_, bg.new_state, p);
  ASSERT_TRUE(first.admitted) << first.message;
  EXPECT_EQ(Find(first, "init")->cpus, CpuSet({4, 5, 6}));
  EXPECT_EQ(Find(first, "side")->cpus, CpuSet({4}));
  EXPECT_EQ(Find(first, "app")->cpus, CpuSet({6, 7}));
  EXPECT_EQ(Find(first, "app2")->cpus, CpuSet({8, 9}));

  const AllocationState released = Release(node_, first.new_state, "p-1", "side");
  AdmissionResult again = MustAdmit(node_, released, p);
  ASSERT_TRUE(again.admitted) << again.message;
  const CpuSet side = Find(again, "side")->cpus;
  EXPECT_EQ(side.Size(), 1);
  for (const char* running : {"app", "app2"}) {
    EXPECT_FALSE(side.Intersects(Find(again, running)->cpus))
        << "sidecar " << side.ToString() << " shares with " << running;
    // The kept containers did not move.
    EXPECT_EQ(Find(again, running)->cpus, Find(first, running)->cpus) << running;
  }
  EXPECT_FALSE(side.Intersects(Find(bg, "c")->cpus));
}

// Re-admitting a pod whose container already holds devices: a different count is refused
// with the device manager's message (kubelet: "changed request"), and so is a held device
// that is no longer in its pool.
TEST_F(AdmissionTest, ReadmissionWithChangedOrVanishedDevicesIsRefused) {
  Use(BaseConfig("best-effort"));
  const pod::Pod one = Pod("p1", {Ctr("a", {{"cpu", "2"}, {"nvidia.com/gpu", "1"}})});
  AdmissionResult first = MustAdmit(node_, state_, one);
  ASSERT_TRUE(first.admitted) << first.message;

  const pod::Pod two = Pod("p1", {Ctr("a", {{"cpu", "2"}, {"nvidia.com/gpu", "2"}})});
  AdmissionResult changed = MustAdmit(node_, first.new_state, two);
  EXPECT_FALSE(changed.admitted);
  EXPECT_EQ(changed.reason, "UnexpectedAdmissionError");
  EXPECT_THAT(changed.message,
              HasSubstr("changed request for resource \"nvidia.com/gpu\" from 1 to 2"));
  EXPECT_TRUE(changed.new_state == first.new_state) << "a refusal changed the state";

  // The pool now lists only the other GPU.
  const std::string held = first.containers[0].devices.at("nvidia.com/gpu").at(0);
  const std::string other = held == "0000:10:00.0" ? "0000:11:00.0" : "0000:10:00.0";
  config::Config config = BaseConfig("best-effort");
  config.devices[0].pci.reset();
  config.devices[0].devices = {{.id = other, .numa_nodes = {held == "0000:10:00.0" ? 1 : 0}}};
  const NodePolicy shrunk = Node(config, topology_);
  AdmissionResult vanished = MustAdmit(shrunk, first.new_state, one);
  EXPECT_FALSE(vanished.admitted);
  EXPECT_EQ(vanished.reason, "UnexpectedAdmissionError");
  EXPECT_THAT(vanished.message, HasSubstr("previously allocated devices are no longer healthy"));
}

TEST_F(AdmissionTest, BadRequestsAreErrorsNotRejections) {
  Use(BaseConfig("best-effort"));
  pod::Pod no_uid = Pod("", {Ctr("a", {{"cpu", "1"}})});
  EXPECT_EQ(Admit(node_, state_, no_uid).status().code(), absl::StatusCode::kInvalidArgument);
  pod::Pod twice = Pod("p1", {Ctr("a", {{"cpu", "1"}})}, {Ctr("a", {{"cpu", "1"}})});
  EXPECT_EQ(Admit(node_, state_, twice).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AdmissionTest, UnmanagedExtendedResourcesAreIgnored) {
  Use(BaseConfig("single-numa-node"));
  AdmissionResult r = MustAdmit(
      node_, state_,
      Pod("p1", {Ctr("a", {{"cpu", "1"}, {"memory", "1Gi"}, {"example.com/widget", "3"}})}));
  EXPECT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(r.containers[0].devices, IsEmpty());
}

}  // namespace
}  // namespace topologyd::admission
