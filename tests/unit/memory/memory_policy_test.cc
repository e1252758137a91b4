// Memory Manager static policy tests (docs/admission.md, "Memory and hugepages": hints,
// allocation and groups). Cases marked "kubelet:" transcribe the data of
// memorymanager/policy_static_test.go (TestStaticPolicyGetTopologyHints,
// TestStaticPolicyRemoveContainer, TestStaticPolicyAllocateWithInitContainers).
#include "lib/memory/memory_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/memory/memory_test_util.h"

namespace topologyd::memory {
namespace {

using namespace ::topologyd::memory::testing;  // NOLINT

// A state with nodes 0..n-1: 2Gi memory (512Mi reserved) and one 1Gi hugepage each.
MemoryState FourNodes(int n = 4) {
  std::vector<ReservedMemory> reserved;
  for (int i = 0; i < n; ++i) reserved.push_back({i, {{"memory", 512 * kMb}}});
  return *NewMemoryState(Topo(n, 3 * kGb, 1), reserved);
}

// The NUMA nodes of a container's blocks (its cpuset.mems).
std::vector<int> MemoryNodes(const MemoryState& s, std::string_view uid, std::string_view name) {
  std::vector<int> nodes;
  for (const auto& [node, bytes] : ContainerMemoryByNode(s, uid, name)) nodes.push_back(node);
  return nodes;
}

hints::ProviderHints Hints(const MemoryState& s, const pod::Pod& pod) {
  auto h = GetContainerTopologyHints(s, pod, pod.containers[0].name);
  EXPECT_TRUE(h.ok()) << h.status();
  return *h;
}

TEST(MemoryHintsTest, KubeletNonGuaranteedPodGetsNoHints) {
  EXPECT_EQ(Hints(FourNodes(1), Pod("pod1", {Ctr("container1", kGb, kGb, false)})), std::nullopt);
}

TEST(MemoryHintsTest, KubeletHintsFromExistingAssignment) {
  MemoryState s = FourNodes(1);
  s.assignments["pod1"]["container1"] = {Block{{0}, "hugepages-1Gi", kGb},
                                         Block{{0}, "memory", kGb}};
  const auto h = Hints(s, Pod("pod1", {Ctr("container1", kGb, kGb)}));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->at("memory"), List({H({0}, true)}));
  EXPECT_EQ(h->at("hugepages-1Gi"), List({H({0}, true)}));
}

TEST(MemoryHintsTest, KubeletExistingAssignmentMismatchGivesNil) {
  const pod::Pod pod = Pod("pod1", {Ctr("container1", kGb, kGb)});
  MemoryState s = FourNodes(1);
  // "number of existing memory assignment resources are different"
  s.assignments["pod1"]["container1"] = {Block{{0}, "memory", kGb}};
  EXPECT_EQ(Hints(s, pod), std::nullopt);
  // "existing memory assignment resources are different"
  s.assignments["pod1"]["container1"] = {Block{{0}, "memory", kGb},
                                         Block{{0}, "hugepages-2Mi", kGb}};
  EXPECT_EQ(Hints(s, pod), std::nullopt);
  // "existing memory assignment size is different"
  s.assignments["pod1"]["container1"] = {Block{{0}, "memory", 512 * kMb},
                                         Block{{0}, "hugepages-1Gi", kGb}};
  EXPECT_EQ(Hints(s, pod), std::nullopt);
}

TEST(MemoryHintsTest, KubeletGroupedNodesAreSkipped) {
  // kubelet: "should calculate new topology hints, when the container does not exist under
  // assignments" — nodes 0 and 1 form a group for pod1; pod2 gets {2}, {3} preferred and
  // {2,3} not; no mask touching the group fits.
  MemoryState s = FourNodes(4);
  for (int i : {0, 1}) {
    s.machine_state.at(i).cells = {0, 1};
    s.machine_state.at(i).number_of_assignments = 2;
    s.machine_state.at(i).memory_map.at("hugepages-1Gi") = Table(kGb, 0, kGb, kGb, 0);
  }
  s.machine_state.at(0).memory_map.at("memory") =
      Table(2 * kGb, 512 * kMb, 1536 * kMb, 1536 * kMb, 0);
  s.machine_state.at(1).memory_map.at("memory") =
      Table(2 * kGb, 512 * kMb, 1536 * kMb, 512 * kMb, kGb);
  for (int i : {2, 3}) {
    s.machine_state.at(i).memory_map.at("memory") =
        Table(2 * kGb, 512 * kMb, 1536 * kMb, 0, 1536 * kMb);
  }
  s.assignments["pod1"]["container1"] = {Block{{0, 1}, "memory", 2 * kGb},
                                         Block{{0, 1}, "hugepages-1Gi", 2 * kGb}};
  const auto h = Hints(s, Pod("pod2", {Ctr("container2", kGb, kGb)}));
  ASSERT_TRUE(h.has_value());
  const auto want = List({H({2}, true), H({3}, true), H({2, 3}, false)});
  EXPECT_EQ(h->at("memory"), want);
  EXPECT_EQ(h->at("hugepages-1Gi"), want);
}

TEST(MemoryHintsTest, KubeletPreferredMeansEmptyMachineWidth) {
  // kubelet: "should not return preferred hints with multiple NUMA nodes for the pod with
  // resources satisfied by a single NUMA node" (2Mi hugepages).
  MemoryState s;
  for (int i : {0, 1}) {
    NumaNodeState n;
    n.cells = {0, 1};
    n.number_of_assignments = 2;
    s.machine_state[i] = n;
  }
  s.machine_state[0].memory_map["memory"] = Table(2 * kGb, 512 * kMb, 1536 * kMb, 1536 * kMb, 0);
  s.machine_state[0].memory_map["hugepages-2Mi"] = Table(20 * kMb, 0, 20 * kMb, 20 * kMb, 0);
  s.machine_state[1].memory_map["memory"] = Table(2 * kGb, 512 * kMb, 1536 * kMb, 512 * kMb, kGb);
  s.machine_state[1].memory_map["hugepages-2Mi"] = Table(20 * kMb, 0, 20 * kMb, 4 * kMb, 16 * kMb);
  s.assignments["pod1"]["container1"] = {Block{{0, 1}, "memory", 2 * kGb},
                                         Block{{0, 1}, "hugepages-2Mi", 24 * kMb}};
  pod::Container c = Ctr("container2", kGb, 0);
  c.limits["hugepages-2Mi"] = c.requests["hugepages-2Mi"] = pod::Quantity::FromInt(16 * kMb);
  const auto h = Hints(s, Pod("pod2", {c}));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->at("memory"), List({H({0, 1}, false)}));
  EXPECT_EQ(h->at("hugepages-2Mi"), List({H({0, 1}, false)}));
}

TEST(MemoryHintsTest, NothingFitsGivesEmptyLists) {
  // No fit: every requested type maps to an empty list ("cannot be satisfied").
  pod::Container c = Ctr("c", 64 * kGb, 0);
  c.limits["hugepages-2Mi"] = c.requests["hugepages-2Mi"] = pod::Quantity::FromInt(4 * kMb);
  const auto h = Hints(FourNodes(2), Pod("p", {c}));
  ASSERT_TRUE(h.has_value());
  ASSERT_EQ(h->size(), 2u);
  for (const char* type : {"memory", "hugepages-2Mi"}) {
    ASSERT_TRUE(h->contains(type)) << type;
    ASSERT_TRUE(h->at(type).has_value()) << type;
    EXPECT_TRUE(h->at(type)->hints.empty()) << type;
  }
}

// Beyond kMaxDenseMergeNodes an explicit list keeps its narrowest masks only. 24 nodes of
// 1.5Gi allocatable, {0,1} a group with 2Gi free: a 2Gi request fits on every pair of unused
// nodes, on the group, and on thousands of wider masks; the group keeps the list explicit.
TEST(MemoryHintsTest, ExplicitListsBeyondTheDenseMergeKeepTheNarrowestMasks) {
  const MemoryState s0 = FourNodes(24);
  const MemoryState s = *Allocate(s0, Pod("x", {Ctr("c", kGb, 0)}), "c", H({0, 1}, true));
  const auto h = Hints(s, Pod("p", {Ctr("c", 2 * kGb, 0)}));
  ASSERT_TRUE(h.has_value());
  const hints::HintList& list = h->at("memory");
  ASSERT_TRUE(list.has_value());
  ASSERT_FALSE(list->upward_closed);
  ASSERT_EQ(list->hints.size(), kMaxHintsWithoutDenseMerge);
  // Narrowest first, and every preferred (2-node) mask is kept: the 231 pairs of unused nodes
  // and the group.
  int preferred = 0;
  for (size_t i = 0; i < list->hints.size(); ++i) {
    const hints::NumaMask mask = *list->hints[i].affinity;
    EXPECT_EQ(list->hints[i].preferred, mask.Count() == 2) << i;
    preferred += list->hints[i].preferred ? 1 : 0;
    if (i > 0) {
      EXPECT_LE(list->hints[i - 1].affinity->Count(), mask.Count()) << i;
    }
  }
  EXPECT_EQ(preferred, 232);
}

TEST(MemoryHintsTest, MultiNumaWhenOneNodeIsTooSmall) {
  // Hint steps 1 and 4: 2Gi does not fit one node's 1.5Gi allocatable; every 2-node mask is
  // preferred, wider ones are not.
  const auto h = Hints(FourNodes(3), Pod("p", {Ctr("c", 2 * kGb, 0)}));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->at("memory"),
            List({H({0, 1}, true), H({0, 2}, true), H({1, 2}, true), H({0, 1, 2}, false)}));
}

TEST(MemoryHintsTest, PodScopeUsesEffectiveRequest) {
  // Pod scope: max(init, sum of apps + sidecars), for every type any container requests.
  const pod::Pod pod = Pod("p", {Ctr("a1", 512 * kMb, 0), Ctr("a2", 512 * kMb, 0)},
                           {Ctr("i1", kGb + 512 * kMb, kGb), Ctr("s", 256 * kMb, 0, true, true)});
  auto req = PodMemoryRequest(pod);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->at("memory"), kGb + 512 * kMb);  // init 1.5Gi vs apps 1Gi + sidecar 256Mi
  EXPECT_EQ(req->at("hugepages-1Gi"), kGb);       // only the init container asks for it
  auto h = GetPodTopologyHints(FourNodes(2), pod);
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->has_value());
  EXPECT_EQ((*h)->at("memory"), List({H({0}, true), H({1}, true), H({0, 1}, false)}));
  EXPECT_EQ((*h)->at("hugepages-1Gi"), (*h)->at("memory"));
}

TEST(MemoryAllocateTest, SingleNodeAndCpusetMems) {
  // Allocation step 4: blocks per type, counts and groups updated, bytes taken lowest node first.
  const MemoryState s0 = FourNodes(2);
  const pod::Pod pod = Pod("p", {Ctr("c", kGb, kGb)});
  auto s1 = Allocate(s0, pod, "c", H({1}, true));
  ASSERT_TRUE(s1.ok()) << s1.status();
  const NumaNodeState& n1 = s1->machine_state.at(1);
  EXPECT_EQ(n1.number_of_assignments, 2);
  EXPECT_EQ(n1.memory_map.at("memory"), Table(3 * kGb, 512 * kMb, 1536 * kMb, kGb, 512 * kMb));
  EXPECT_EQ(n1.memory_map.at("hugepages-1Gi"), Table(kGb, 0, kGb, kGb, 0));
  EXPECT_EQ(MemoryNodes(*s1, "p", "c"), std::vector<int>{1});
  EXPECT_EQ(s1->assignments.at("p").at("c"),
            (std::vector<Block>{{{1}, "hugepages-1Gi", kGb}, {{1}, "memory", kGb}}));
  // Idempotent: allocating again changes nothing.
  EXPECT_EQ(*Allocate(*s1, pod, "c", H({0}, true)), *s1);
  // Release restores the default state.
  EXPECT_EQ(RemoveContainer(*s1, "p", "c"), s0);
}

TEST(MemoryAllocateTest, ExtendsANarrowMergedHint) {
  // Allocation step 2: the merged mask {0} cannot hold 2Gi; it is extended to the best hint
  // containing it, {0,1}, which is preferred; memory is taken from node 0 first.
  const MemoryState s0 = FourNodes(2);
  auto s1 = Allocate(s0, Pod("p", {Ctr("c", 2 * kGb, 0)}), "c", H({0}, false));
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(MemoryNodes(*s1, "p", "c"), (std::vector<int>{0, 1}));
  EXPECT_EQ(s1->machine_state.at(0).memory_map.at("memory").free, 0U);
  EXPECT_EQ(s1->machine_state.at(1).memory_map.at("memory").free, kGb);
  EXPECT_EQ(s1->machine_state.at(0).cells, (std::vector<int>{0, 1}));
  // The group now refuses single-NUMA hints on its nodes...
  auto h = Hints(*s1, Pod("q", {Ctr("c", 256 * kMb, 0)}));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->at("memory"), List({H({0, 1}, false)}));
  // ...and releasing gives the nodes back their own group.
  const MemoryState s2 = RemoveContainer(*s1, "p", "c");
  EXPECT_EQ(s2, s0);
}

TEST(MemoryAllocateTest, SingleNodeHintOnGroupedNodeIsRefused) {
  // Allocation step 3 checks the group rules again. When the topology manager's AND of all
  // providers narrows memory's {0,1} to {1} and node 1 still has room, a single-NUMA block on node
  // 1 would mix with the {0,1} group's cross-NUMA blocks: refused. (kubelet's Go code allocates and
  // overwrites node 1's group.)
  const MemoryState s0 = FourNodes(3);
  MemoryState s = *Allocate(s0, Pod("x", {Ctr("c", 2 * kGb, 0)}), "c", H({0, 1}, true));
  auto r = Allocate(s, Pod("p", {Ctr("c", 256 * kMb, 0)}), "c", H({1}, true));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()),
            "[memorymanager] preferred hint violates NUMA node allocation");
  // A node outside any group still takes single-NUMA blocks.
  auto free_node = Allocate(s, Pod("p", {Ctr("c", 256 * kMb, 0)}), "c", H({2}, true));
  ASSERT_TRUE(free_node.ok()) << free_node.status();
  EXPECT_EQ(free_node->machine_state.at(2).cells, std::vector<int>{2});
}

TEST(MemoryAllocateTest, KubeletErrorMessages) {
  const MemoryState s0 = FourNodes(2);
  {
    // Nothing fits and the merged hint is nil ("none" policy).
    auto r = Allocate(s0, Pod("p", {Ctr("c", 64 * kGb, 0)}), "c", hints::TopologyHint{});
    EXPECT_EQ(std::string(r.status().message()),
              "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
              "memory is available");
  }
  {
    auto r = Allocate(s0, Pod("p", {Ctr("c", 64 * kGb, 0)}), "c", H({0}, true));
    EXPECT_EQ(std::string(r.status().message()),
              "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
  }
  {
    // A nil merged hint marked preferred while the best own hint is not preferred: nodes 0 and
    // 1 form a group, so only {0,1} is possible although one node would fit when empty.
    const MemoryState s = *Allocate(s0, Pod("x", {Ctr("c", 2 * kGb, 0)}), "c", H({0, 1}, true));
    hints::TopologyHint nil_preferred;
    nil_preferred.preferred = true;
    auto r = Allocate(s, Pod("p", {Ctr("c", 512 * kMb, 0)}), "c", nil_preferred);
    EXPECT_EQ(std::string(r.status().message()),
              "[memorymanager] failed to find the default preferred hint");
    // Without the preferred flag the same request joins the group.
    auto ok = Allocate(s, Pod("p", {Ctr("c", 512 * kMb, 0)}), "c", hints::TopologyHint{});
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(MemoryNodes(*ok, "p", "c"), (std::vector<int>{0, 1}));
  }
  {
    // Group rule: node 0 holds a single-NUMA block, so {0,1} violates it.
    MemoryState s = *Allocate(s0, Pod("x", {Ctr("c", 256 * kMb, 0)}), "c", H({0}, true));
    auto r = Allocate(s, Pod("p", {Ctr("c", 256 * kMb, 0)}), "c", H({0, 1}, false));
    EXPECT_EQ(std::string(r.status().message()),
              "[memorymanager] preferred hint violates NUMA node allocation");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  }
  {
    // Extension to a non-preferred mask under a preferred merged hint.
    auto r = Allocate(s0, Pod("p", {Ctr("c", 3 * kGb + 512 * kMb, 0)}), "c", H({0}, true));
    EXPECT_EQ(std::string(r.status().message()),
              "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
  }
  {
    pod::Pod p = Pod("p", {Ctr("c", kGb, 0)});
    p.containers[0].requests["memory"] = p.containers[0].limits["memory"] =
        *pod::Quantity::Parse("0.5");
    EXPECT_EQ(std::string(Allocate(s0, p, "c", H({0}, true)).status().message()),
              "[memorymanager] failed to represent quantity as int64");
  }
  // Non-Guaranteed pods are not touched.
  EXPECT_EQ(*Allocate(s0, Pod("b", {Ctr("c", kGb, 0, false)}), "c", H({0}, true)), s0);
}

TEST(MemoryAllocateTest, KubeletRemoveCrossNumaContainer) {
  // kubelet: "should delete the cross NUMA container assignment and update the machine state"
  MemoryState s;
  for (int i : {0, 1}) {
    NumaNodeState n;
    n.cells = {0, 1};
    n.number_of_assignments = 2;
    n.memory_map["memory"] = Table(kGb, 512 * kMb, 512 * kMb, 512 * kMb, 0);
    n.memory_map["hugepages-1Gi"] =
        i == 0 ? Table(kGb, 0, kGb, kGb, 0) : Table(kGb, 0, kGb, 0, kGb);
    s.machine_state[i] = n;
  }
  s.assignments["pod1"]["container1"] = {Block{{0, 1}, "memory", kGb},
                                         Block{{0, 1}, "hugepages-1Gi", kGb}};
  const MemoryState r = RemoveContainer(s, "pod1", "container1");
  EXPECT_TRUE(r.assignments.empty());
  for (int i : {0, 1}) {
    EXPECT_EQ(r.machine_state.at(i).number_of_assignments, 0);
    EXPECT_EQ(r.machine_state.at(i).cells, std::vector<int>{i});
    EXPECT_EQ(r.machine_state.at(i).memory_map.at("memory"),
              Table(kGb, 512 * kMb, 512 * kMb, 0, 512 * kMb));
    EXPECT_EQ(r.machine_state.at(i).memory_map.at("hugepages-1Gi"), Table(kGb, 0, kGb, 0, kGb));
  }
  // kubelet: "should do nothing when the container does not exist under the state"
  EXPECT_EQ(RemoveContainer(r, "pod1", "container1"), r);
}

TEST(MemoryAllocateTest, KubeletInitContainersMemoryIsReused) {
  // kubelet TestStaticPolicyAllocateWithInitContainers: init 7Gi then 4Gi, apps 5Gi and 2Gi,
  // on one node with 10Gi allocatable of each type: only 7Gi is ever reserved.
  MemoryState s;
  NumaNodeState n;
  n.cells = {0};
  n.memory_map["memory"] = Table(10 * kGb, 512 * kMb, 10 * kGb, 0, 10 * kGb);
  n.memory_map["hugepages-1Gi"] = Table(10 * kGb, 0, 10 * kGb, 0, 10 * kGb);
  s.machine_state[0] = n;
  const pod::Pod pod =
      Pod("pod1", {Ctr("container1", 5 * kGb, 5 * kGb), Ctr("container2", 2 * kGb, 2 * kGb)},
          {Ctr("initContainer1", 7 * kGb, 7 * kGb), Ctr("initContainer2", 4 * kGb, 4 * kGb)});
  hints::TopologyHint nil;  // kubelet's test passes an empty hint
  for (const char* name : {"initContainer1", "initContainer2", "container1", "container2"}) {
    auto next = Allocate(s, pod, name, nil);
    ASSERT_TRUE(next.ok()) << name << ": " << next.status();
    s = *next;
  }
  const NumaNodeState& got = s.machine_state.at(0);
  EXPECT_EQ(got.number_of_assignments, 8);
  EXPECT_EQ(got.memory_map.at("memory"), Table(10 * kGb, 512 * kMb, 10 * kGb, 7 * kGb, 3 * kGb));
  EXPECT_EQ(got.memory_map.at("hugepages-1Gi"), Table(10 * kGb, 0, 10 * kGb, 7 * kGb, 3 * kGb));
  const auto& a = s.assignments.at("pod1");
  EXPECT_EQ(a.at("initContainer1")[1], (Block{{0}, "memory", 0}));
  EXPECT_EQ(a.at("initContainer2")[1], (Block{{0}, "memory", 0}));
  EXPECT_EQ(a.at("container1")[1], (Block{{0}, "memory", 5 * kGb}));
  EXPECT_EQ(a.at("container2")[1], (Block{{0}, "memory", 2 * kGb}));
  // Releasing the whole pod returns every byte.
  const MemoryState empty = RemovePod(s, "pod1");
  EXPECT_EQ(empty.machine_state.at(0).memory_map.at("memory").free, 10 * kGb);
  EXPECT_EQ(empty.machine_state.at(0).number_of_assignments, 0);
}

TEST(MemoryHintsTest, BoundedOnManyNumaNodes) {
  // Above kMaxExactNumaNodes the walk is budgeted and goes narrowest first: 64 nodes, 1Gi
  // hugepages only on nodes 3, 17, 40 and 63; the first hint is {3}, preferred.
  topology::Topology t = Topo(64, 4 * kGb, 0);
  for (int i : {3, 17, 40, 63}) t.numa_nodes[static_cast<size_t>(i)].hugepages[0].count = 1;
  const MemoryState s = *NewMemoryState(t, {{0, {{"memory", kGb}}}});
  const auto h = Hints(s, Pod("p", {Ctr("c", kGb, kGb)}));
  ASSERT_TRUE(h.has_value());
  const auto& list = h->at("hugepages-1Gi");
  ASSERT_TRUE(list.has_value());
  ASSERT_FALSE(list->hints.empty());
  EXPECT_EQ(list->hints[0], H({3}, true));
  EXPECT_EQ(list->hints[3], H({63}, true));
  EXPECT_LE(list->hints.size(), static_cast<size_t>(kMaxMaskBudget));
  EXPECT_EQ(h->at("memory"), list);
}

}  // namespace
}  // namespace topologyd::memory
