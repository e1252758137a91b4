// Pods split over N NUMA nodes (topologyd.io/numa-nodes and friends) on 2-, 4-, 8- and
// 32-NUMA machines: the nodes chosen or named, the CPUs and memory each cell gets, every
// rejection, and the records across a checkpoint and a restart.
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/admission/admission_json.h"
#include "lib/admission/numa_split_choice.h"
#include "lib/admission/numa_split_request.h"
#include "lib/admission/reasons.h"
#include "lib/admission/state_records.h"
#include "lib/ledger/ledger.h"
#include "lib/state/checkpoint_codec.h"
#include "tests/support/durable_state.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::topologyd::testing::Durable;

using Annotations = std::map<std::string, std::string>;

// One Guaranteed container with `cpus` CPUs and `memory`.
pod::Container Guest(std::string name, int cpus, std::string memory) {
  return Ctr(std::move(name), {{"cpu", std::to_string(cpus)}, {"memory", std::move(memory)}});
}

pod::Pod SplitPod(std::string uid, std::vector<pod::Container> containers,
                  Annotations annotations) {
  return Pod(std::move(uid), std::move(containers), {}, std::move(annotations));
}

// The NUMA nodes (OS ids) holding `cpus` on `node`.
std::vector<int> NodesOf(const NodePolicy& node, const CpuSet& cpus) {
  std::vector<int> out;
  for (int id : node.numa.ids()) {
    if (cpus.Intersects(node.cpu->topology().CpusInNumaNodes({id}))) out.push_back(id);
  }
  return out;
}

std::vector<int> CellNodes(const AdmissionResult& r) {
  std::vector<int> out;
  if (!r.explanation.numa_split.has_value()) return out;
  for (const NumaCell& c : r.explanation.numa_split->cells) out.push_back(c.numa_node);
  return out;
}

// The machine's test config with topology manager policy none: the split must not need it.
NodePolicy NodeFor(const topology::Topology& machine, std::string policy = "none") {
  return Node(BaseConfig(std::move(policy)), machine);
}

void ExpectRejected(const AdmissionResult& r, const AllocationState& before,
                    std::string_view message) {
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.reason, kNumaSplitError) << r.message;
  EXPECT_THAT(r.message, HasSubstr(std::string(message)));
  EXPECT_EQ(r.new_state, before);
  EXPECT_TRUE(r.containers.empty());
}

TEST(NumaSplitTest, TwoNodesEvenSplit) {
  // 2 nodes of 8 CPUs (4 cores x 2 threads); CPUs 0-1 reserved.
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const AdmissionResult r =
      MustAdmit(node, node.empty_state,
                SplitPod("g", {Guest("vm", 8, "8Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(0, 1));
  const state::ContainerRecord* vm = Find(r, "vm");
  ASSERT_NE(vm, nullptr);
  EXPECT_TRUE(vm->exclusive);
  EXPECT_EQ(vm->cpus.Size(), 8);
  EXPECT_EQ(vm->cpus.Intersection(node.cpu->topology().CpusInNumaNodes({0})).Size(), 4);
  EXPECT_EQ(vm->cpus.Intersection(node.cpu->topology().CpusInNumaNodes({1})).Size(), 4);
  EXPECT_FALSE(vm->cpus.Contains(0));
  EXPECT_THAT(vm->numa_affinity, ElementsAre(0, 1));
  EXPECT_THAT(state::MemoryNodes(*vm), ElementsAre(0, 1));
  // Packing inside a node follows the CPU manager: whole cores.
  const NumaSplit& split = *r.explanation.numa_split;
  EXPECT_EQ(split.cells[1].cpu_set, CpuSet::Parse("8-11").value());
  EXPECT_EQ(split.cells[0].memory, 4 * kGi);
  EXPECT_FALSE(split.placed_by_pod);
  EXPECT_TRUE(r.explanation.merges.empty());
  EXPECT_THAT(r.explanation.notes,
              Contains(HasSubstr("NUMA split: cell 1 on NUMA node 1: 4 exclusive CPUs "
                                 "(8-11), 4Gi memory")));
  // Memory: one block over both nodes, 8Gi in all.
  uint64_t reserved = 0;
  for (const auto& [id, ns] : r.new_state.memory.machine_state) {
    reserved += ns.memory_map.at("memory").reserved;
    EXPECT_EQ(ns.cells, (std::vector<int>{0, 1}));
  }
  EXPECT_EQ(reserved, 8 * kGi);
  // The CPUs left the shared pool.
  EXPECT_FALSE(r.new_state.cpu.default_cpu_set.Intersects(vm->cpus));
}

TEST(NumaSplitTest, ClosestNodesByDistance) {
  // 4 nodes, two per package: 11 within a package, 21 across.
  const topology::Topology machine = Machine(MachineSpec{.numa_per_package = 2});
  const NodePolicy node = NodeFor(machine, "single-numa-node");
  // Node 1 is taken by a pod that fills it (8 CPUs fit only there: node 0 has 2 reserved).
  const AdmissionResult full =
      MustAdmit(node, node.empty_state, Pod("busy", {Guest("app", 8, "1Gi")}));
  ASSERT_TRUE(full.admitted) << full.message;
  ASSERT_THAT(Find(full, "app")->numa_affinity, ElementsAre(1));
  // {0,2}, {0,3} are 21 apart, {2,3} 11: the pair in one package wins though 0 is lower.
  const AdmissionResult r =
      MustAdmit(node, full.new_state,
                SplitPod("g", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(2, 3));
  EXPECT_THAT(NodesOf(node, Find(r, "vm")->cpus), ElementsAre(2, 3));

  // On the empty machine the lowest pair of one package: {0,1}.
  const AdmissionResult empty =
      MustAdmit(node, node.empty_state,
                SplitPod("g", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  EXPECT_THAT(CellNodes(empty), ElementsAre(0, 1));
}

TEST(NumaSplitTest, NamedNodesInCellOrder) {
  const topology::Topology machine = Machine(MachineSpec{.numa_per_package = 2});
  const NodePolicy node = NodeFor(machine);
  const AdmissionResult r = MustAdmit(node, node.empty_state,
                                      SplitPod("g", {Guest("vm", 6, "3Gi")},
                                               {{"topologyd.io/numa-nodes", "2"},
                                                {"topologyd.io/numa-placement", "3,0"},
                                                {"topologyd.io/numa-cpus.0", "4"},
                                                {"topologyd.io/numa-cpus.1", "2"},
                                                {"topologyd.io/numa-mem.0", "2Gi"},
                                                {"topologyd.io/numa-mem.1", "1Gi"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(3, 0));
  const NumaSplit& split = *r.explanation.numa_split;
  EXPECT_TRUE(split.placed_by_pod);
  EXPECT_EQ(split.cells[0].cpu_set.Size(), 4);
  EXPECT_THAT(NodesOf(node, split.cells[0].cpu_set), ElementsAre(3));
  EXPECT_EQ(split.cells[1].cpu_set.Size(), 2);
  EXPECT_THAT(NodesOf(node, split.cells[1].cpu_set), ElementsAre(0));
  EXPECT_EQ(split.cells[1].memory, kGi);
  EXPECT_THAT(Find(r, "vm")->numa_affinity, ElementsAre(0, 3));
}

TEST(NumaSplitTest, ContainersFillTheCellsInOrder) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const AdmissionResult r = MustAdmit(node, node.empty_state,
                                      SplitPod("g", {Guest("a", 3, "1Gi"), Guest("b", 5, "3Gi")},
                                               {{"topologyd.io/numa-nodes", "2"},
                                                {"topologyd.io/numa-cpus.0", "2"},
                                                {"topologyd.io/numa-cpus.1", "6"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  // a: cell 0's 2 CPUs and 1 of cell 1; b: the other 5 of cell 1.
  const CpuSet a = Find(r, "a")->cpus;
  const CpuSet b = Find(r, "b")->cpus;
  EXPECT_EQ(a.Intersection(node.cpu->topology().CpusInNumaNodes({0})).Size(), 2);
  EXPECT_EQ(a.Intersection(node.cpu->topology().CpusInNumaNodes({1})).Size(), 1);
  EXPECT_THAT(NodesOf(node, b), ElementsAre(1));
  EXPECT_EQ(b.Size(), 5);
  EXPECT_FALSE(a.Intersects(b));
  // Memory split evenly (4Gi over 2), each container's block over both nodes.
  EXPECT_EQ(r.explanation.numa_split->cells[0].memory, 2 * kGi);
  EXPECT_THAT(state::MemoryNodes(*Find(r, "a")), ElementsAre(0, 1));
}

TEST(NumaSplitTest, EightNodesOnePackageFirst) {
  // 8 nodes, four per package.
  const topology::Topology machine = Machine(MachineSpec{.numa_per_package = 4});
  const NodePolicy node = NodeFor(machine);
  AdmissionResult r =
      MustAdmit(node, node.empty_state,
                SplitPod("g4", {Guest("vm", 8, "4Gi")}, {{"topologyd.io/numa-nodes", "4"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(0, 1, 2, 3));
  // A 2-node guest: nodes 0-3 are in the first one's memory group (kubelet's group rule keeps
  // other blocks over several nodes off them), so the other package.
  const AdmissionResult second =
      MustAdmit(node, r.new_state,
                SplitPod("h2", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(second.admitted) << second.message;
  EXPECT_THAT(CellNodes(second), ElementsAre(4, 5));
  // Another 4-node guest may share the same group, as kubelet lets equal groups share.
  const AdmissionResult third =
      MustAdmit(node, second.new_state,
                SplitPod("g4b", {Guest("vm", 4, "4Gi")}, {{"topologyd.io/numa-nodes", "4"}}));
  ASSERT_TRUE(third.admitted) << third.message;
  EXPECT_THAT(CellNodes(third), ElementsAre(0, 1, 2, 3));
  // All eight.
  r = MustAdmit(node, node.empty_state,
                SplitPod("g8", {Guest("vm", 16, "8Gi")}, {{"topologyd.io/numa-nodes", "8"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(Find(r, "vm")->cpus.Size(), 16);
}

TEST(NumaSplitTest, ManyNodesGrowFromTheClosest) {
  // 32 nodes of one CPU each, eight per package: too many 8-node sets to try them all.
  const topology::Topology machine = Machine(MachineSpec{.packages = 4,
                                                         .numa_per_package = 8,
                                                         .cores_per_numa = 1,
                                                         .threads = 1,
                                                         .memory_per_node = 4 * kGi,
                                                         .hugepages_1g_per_node = 0});
  const NodePolicy node = NodeFor(machine);
  // Nodes 0 and 1 have their only CPU reserved: package 1 (nodes 8-15) is the first whole one.
  const AdmissionResult r =
      MustAdmit(node, node.empty_state,
                SplitPod("g", {Guest("vm", 8, "8Gi")}, {{"topologyd.io/numa-nodes", "8"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_THAT(CellNodes(r), ElementsAre(8, 9, 10, 11, 12, 13, 14, 15));
}

TEST(NumaSplitTest, Rejections) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const AllocationState& empty = node.empty_state;
  auto admit = [&](Annotations a, std::vector<pod::Container> c = {}) {
    if (c.empty()) c = {Guest("vm", 8, "8Gi")};
    return MustAdmit(node, empty, SplitPod("g", std::move(c), std::move(a)));
  };
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "4"}}), empty,
                 "the pod asks for 4 NUMA nodes; this machine has 2");
  // Node 0 has 6 free CPUs (0-1 are reserved).
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"},
                        {"topologyd.io/numa-placement", "0,1"},
                        {"topologyd.io/numa-cpus.0", "7"},
                        {"topologyd.io/numa-cpus.1", "1"}}),
                 empty, "NUMA node 0: 6 free exclusive CPUs, cell 0 needs 7");
  // Node 1: 16Gi less 4 1Gi huge pages.
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"},
                        {"topologyd.io/numa-placement", "0,1"},
                        {"topologyd.io/numa-mem.0", "1Gi"},
                        {"topologyd.io/numa-mem.1", "13Gi"}},
                       {Guest("vm", 8, "14Gi")}),
                 empty, "NUMA node 1: 12Gi free memory, cell 1 needs 13Gi");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}}, {Guest("vm", 7, "8Gi")}), empty,
                 "the pod's 7 exclusive CPUs do not divide evenly over 2 NUMA nodes");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "two"}}), empty,
                 "annotation topologyd.io/numa-nodes: \"two\" is not a number of NUMA nodes");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "0"}}), empty, "is not a number of NUMA nodes");
  ExpectRejected(admit({{"topologyd.io/numa-cpus.0", "4"}}), empty, "need topologyd.io/numa-nodes");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-cpus.0", "4"}}),
                 empty, "annotation topologyd.io/numa-cpus.1 is missing");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-cpus.2", "4"}}),
                 empty, "the cell index must be 0 to 1");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"},
                        {"topologyd.io/numa-cpus.0", "4"},
                        {"topologyd.io/numa-cpus.1", "2"}}),
                 empty, "the cells' CPUs add up to 6, but the pod's containers ask for 8");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"},
                        {"topologyd.io/numa-mem.0", "4Gi"},
                        {"topologyd.io/numa-mem.1", "1.5"}}),
                 empty, "numa-mem.1: \"1.5\" is not a positive whole number of bytes");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-placement", "1,1"}}),
                 empty, "names NUMA node 1 twice");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-placement", "0,5"}}),
                 empty, "names NUMA node 5, which this machine lacks");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-placement", "0"}}),
                 empty, "names 1 NUMA nodes, but topologyd.io/numa-nodes is \"2\"");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}},
                       {Ctr("vm", {{"cpu", "8"}, {"memory", "8Gi"}, {"hugepages-1Gi", "2Gi"}})}),
                 empty, "container \"vm\" asks for hugepages-1Gi: huge pages are not split");
  // Not Guaranteed: nothing exclusive to split.
  pod::Container burstable = Guest("vm", 8, "8Gi");
  burstable.limits.erase("memory");
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}}, {burstable}), empty,
                 "only a Guaranteed pod");
  // Each node can hold a cell of 7, but not two of them: no pair at all.
  ExpectRejected(admit({{"topologyd.io/numa-nodes", "2"}}, {Guest("vm", 14, "8Gi")}), empty,
                 "no 2 distinct NUMA nodes can hold the cells (cell 0: 7 CPUs + 4Gi; cell 1: 7 "
                 "CPUs + 4Gi): NUMA node 0: 6 free exclusive CPUs, 11Gi free memory; NUMA node "
                 "1: 8 free exclusive CPUs, 12Gi free memory");
}

TEST(NumaSplitTest, MemoryGroupRuleNamesTheNode) {
  const topology::Topology machine = Machine(MachineSpec{.numa_per_package = 2});
  const NodePolicy node = NodeFor(machine, "single-numa-node");
  const AdmissionResult one =
      MustAdmit(node, node.empty_state, Pod("one", {Guest("app", 2, "1Gi")}));
  ASSERT_TRUE(one.admitted) << one.message;
  const int pinned = Find(one, "app")->numa_affinity.at(0);
  const std::string placement = fmt::format("{},{}", pinned, pinned == 3 ? 2 : 3);
  const AdmissionResult r = MustAdmit(
      node, one.new_state,
      SplitPod("g", {Guest("vm", 4, "2Gi")},
               {{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-placement", placement}}));
  ExpectRejected(r, one.new_state,
                 fmt::format("NUMA node {}: holds memory pinned to it alone", pinned));
  // Chosen instead of named: the other nodes.
  const AdmissionResult chosen =
      MustAdmit(node, one.new_state,
                SplitPod("g", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(chosen.admitted) << chosen.message;
  for (int id : CellNodes(chosen)) EXPECT_NE(id, pinned);
}

TEST(NumaSplitTest, AGroupIsCheckedAsOnePool) {
  // Node 0 can give 11Gi, node 1 12Gi. The first guest's 16Gi is booked lowest node first
  // (11Gi on node 0, 5Gi on node 1): node by node, node 0 has nothing left, but the group
  // [0,1] still has 7Gi, which a second guest over the same nodes may take.
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const AdmissionResult first =
      MustAdmit(node, node.empty_state,
                SplitPod("g1", {Guest("vm", 4, "16Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(first.admitted) << first.message;
  ASSERT_EQ(first.new_state.memory.machine_state.at(0).memory_map.at("memory").free, 0U);
  const AdmissionResult second =
      MustAdmit(node, first.new_state,
                SplitPod("g2", {Guest("vm", 4, "6Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(second.admitted) << second.message;
  EXPECT_THAT(CellNodes(second), ElementsAre(0, 1));
  // 8Gi more is beyond the pool.
  ExpectRejected(MustAdmit(node, first.new_state,
                           SplitPod("g3", {Guest("vm", 4, "8Gi")},
                                    {{"topologyd.io/numa-nodes", "2"},
                                     {"topologyd.io/numa-placement", "0,1"}})),
                 first.new_state,
                 "NUMA node 0: its memory group [0,1] has 7Gi free memory, the cells need 8Gi");
}

TEST(NumaSplitTest, InitContainersStayInTheSharedPool) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const AdmissionResult r = MustAdmit(node, node.empty_state,
                                      Pod("g", {Guest("vm", 4, "2Gi")}, {Guest("setup", 2, "1Gi")},
                                          {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_FALSE(Find(r, "setup")->exclusive);
  EXPECT_TRUE(Find(r, "setup")->memory.empty());
  EXPECT_EQ(Find(r, "vm")->cpus.Size(), 4);
  EXPECT_THAT(r.explanation.notes, Contains(HasSubstr("init container \"setup\" runs in "
                                                      "the shared pool")));
}

TEST(NumaSplitTest, AdmittedAgainIsRefusedUntilReleased) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  const pod::Pod pod = SplitPod("g", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}});
  const AdmissionResult r = MustAdmit(node, node.empty_state, pod);
  ASSERT_TRUE(r.admitted) << r.message;
  ExpectRejected(MustAdmit(node, r.new_state, pod), r.new_state, "already holds resources");
  // Release gives everything back.
  EXPECT_EQ(Durable(Release(node, r.new_state, "g")), Durable(node.empty_state));
}

TEST(NumaSplitTest, RecordsSurviveACheckpointAndARestart) {
  const topology::Topology machine =
      Machine(MachineSpec{.numa_per_package = 2, .gpus_per_node = 1});
  const NodePolicy node = NodeFor(machine);
  AllocationState state = node.empty_state;
  state::State records;
  auto add = [&](const pod::Pod& pod) {
    const AdmissionResult r = MustAdmit(node, state, pod);
    ASSERT_TRUE(r.admitted) << r.message;
    state = r.new_state;
    records.pods[pod.uid] = ledger::ToPodRecord(pod, r);
  };
  add(Pod("plain", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})}));
  add(SplitPod("g", {Guest("a", 3, "1Gi"), Guest("b", 3, "2Gi")},
               {{"topologyd.io/numa-nodes", "3"}, {"topologyd.io/numa-placement", "3,1,2"}}));
  absl::StatusOr<std::string> bytes = state::EncodeState(records);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<state::State> decoded = state::DecodeState(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, records);
  absl::StatusOr<AllocationState> restored = RestoreAllocationState(node, *decoded);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->cpu, Durable(state).cpu);
  EXPECT_EQ(restored->memory.assignments, state.memory.assignments);
  EXPECT_EQ(restored->memory.machine_state, state.memory.machine_state);
  EXPECT_EQ(restored->devices, state.devices);
  const state::ContainerRecord* a = state::FindContainer(*decoded, "g", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_THAT(a->numa_affinity, ElementsAre(1, 2, 3));
  EXPECT_EQ(a->cpus.Size(), 3);
}

TEST(NumaSplitTest, ExplainShowsTheCells) {
  const topology::Topology machine = Machine(MachineSpec{});
  const NodePolicy node = NodeFor(machine);
  absl::StatusOr<AdmissionResult> r =
      Explain(node, node.empty_state,
              SplitPod("g", {Guest("vm", 4, "2Gi")}, {{"topologyd.io/numa-nodes", "2"}}));
  ASSERT_TRUE(r.ok()) << r.status();
  const nlohmann::json doc = AdmissionResultToJson(node, *r, true);
  ASSERT_TRUE(doc.contains("numa_split")) << doc.dump();
  EXPECT_EQ(doc["numa_split"]["cells"][1]["numa_node"], 1);
  EXPECT_EQ(doc["numa_split"]["cells"][1]["cpu_set"], "8-9");
  EXPECT_EQ(doc["numa_split"]["cells"][0]["memory"], kGi);
  // Pods without the annotations keep their document's shape.
  absl::StatusOr<AdmissionResult> plain =
      Explain(node, node.empty_state, Pod("p", {Guest("vm", 4, "2Gi")}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(AdmissionResultToJson(node, *plain, true).contains("numa_split"));
}

TEST(NumaSplitChoiceTest, TiesGoToTheLowestIdsAndUnknownDistancesAreEqual) {
  SplitChoiceInput in;
  in.cells = {{.cpus = 1, .memory = 0}, {.cpus = 2, .memory = 0}};
  for (int id : {0, 1, 2}) in.nodes.push_back(NodeOffer{.id = id, .free_cpus = 2});
  in.nodes[0].free_cpus = 1;  // only cell 0 fits on node 0
  in.check_memory = false;
  absl::StatusOr<std::vector<int>> chosen = ChooseSplitNodes(in);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_THAT(*chosen, ElementsAre(0, 1));
  // Node 0 closer to 2 than to 1.
  in.distances = {{10, 30, 12}, {30, 10, 30}, {12, 30, 10}};
  chosen = ChooseSplitNodes(in);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_THAT(*chosen, ElementsAre(0, 2));
  // Cells are matched so that the big one still finds room: cell 1 cannot go on node 0.
  in.cells = {{.cpus = 2, .memory = 0}, {.cpus = 1, .memory = 0}};
  chosen = ChooseSplitNodes(in);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_THAT(*chosen, ElementsAre(2, 0));
}

TEST(NumaSplitChoiceTest, BytesText) {
  EXPECT_EQ(BytesText(2 * kGi), "2Gi");
  EXPECT_EQ(BytesText(512 * kMi), "512Mi");
  EXPECT_EQ(BytesText(1000), "1000");
  EXPECT_EQ(BytesText(0), "0");
}

}  // namespace
}  // namespace topologyd::admission
