// Runs on the 2-node machine of admission_test_util (CPUs 0-7 on node 0, 8-15 on node 1, CPUs
// 0-1 reserved: 6 + 8 CPUs for containers), with outcomes worked out by hand; and the same
// seed giving the same run.
#include "lib/simulate/run.h"

#include <memory>

#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::simulate {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

std::shared_ptr<const admission::NodePolicy> Policy(const std::string& tm_policy) {
  config::Config c = BaseConfig(tm_policy, "0-1");
  c.devices.clear();
  return std::make_shared<const admission::NodePolicy>(Node(c, Machine(MachineSpec{})));
}

pod::Pod Cpus(const std::string& name, const std::string& cpus) {
  return Pod(name, {Ctr("app", {{"cpu", cpus}, {"memory", "1Gi"}})});
}

std::vector<Arrival> Arrivals(const std::vector<pod::Pod>& pods, WorkloadOptions options = {}) {
  absl::StatusOr<std::vector<Arrival>> a = BuildArrivals(pods, options);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : std::vector<Arrival>{};
}

const FreeAmount* Free(const RunResult& r, const std::string& resource) {
  for (const FreeAmount& f : r.end.free) {
    if (f.resource == resource) return &f;
  }
  return nullptr;
}

TEST(RunTest, SingleNumaNodeCountsRejectionsFreeAndStrandedCpus) {
  // 7 -> node 1 (1 left); 2 -> node 0 (4 left); 2 -> node 0 (2 left); 5 fits no node.
  absl::StatusOr<RunResult> r =
      Simulate(Policy("single-numa-node"),
               Arrivals({Cpus("a", "7"), Cpus("b", "2"), Cpus("c", "2"), Cpus("d", "5")}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->admitted, 3);
  EXPECT_EQ(r->rejected, 1);
  EXPECT_EQ(r->rejections, (std::map<std::string, int>{{"TopologyAffinityError", 1}}));
  EXPECT_EQ(r->pinned_containers, 3);
  EXPECT_EQ(r->single_numa_containers, 3);
  EXPECT_EQ(r->fewest_nodes_containers, 3);
  const FreeAmount* cpu = Free(*r, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->free, 3u);      // 2 on node 0, 1 on node 1
  EXPECT_EQ(cpu->unit, 2u);      // sizes 7, 2, 2, 5
  EXPECT_EQ(cpu->stranded, 1u);  // the one on node 1
  ASSERT_EQ(r->end.numa.size(), 2u);
  EXPECT_EQ(r->end.numa[0].exclusive_cpus.Size(), 4);
  EXPECT_EQ(r->end.numa[1].exclusive_cpus.Size(), 7);
  EXPECT_EQ(r->end.numa[0].reserved_cpus, *CpuSet::Parse("0-1"));
  // Memory: everything allocatable less the three admitted pods' 1 GiB.
  const admission::NodePolicy node = *Policy("single-numa-node");
  uint64_t allocatable = 0;
  for (const auto& entry : node.empty_state.memory.machine_state) {
    allocatable += entry.second.memory_map.at("memory").allocatable;
  }
  const FreeAmount* memory = Free(*r, "memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->free, allocatable - 3 * kGi);
  EXPECT_EQ(memory->unit, kGi);
  EXPECT_EQ(memory->stranded, 0u);
}

TEST(RunTest, BestEffortSpreadsAContainerOverMoreNodesThanItNeeds) {
  // 7 -> node 1 (1 left); 4 -> node 0 (2 left); 3 fits no node alone: spread over both,
  // though on an empty machine one node would hold it.
  absl::StatusOr<RunResult> r =
      Simulate(Policy("best-effort"), Arrivals({Cpus("a", "7"), Cpus("b", "4"), Cpus("c", "3")}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->admitted, 3);
  EXPECT_EQ(r->pinned_containers, 3);
  EXPECT_EQ(r->single_numa_containers, 2);
  EXPECT_EQ(r->fewest_nodes_containers, 2);
  EXPECT_EQ(Free(*r, "cpu")->free, 0u);
}

TEST(RunTest, ChurnReleasesPodsAsTheirLifetimesEnd) {
  const std::vector<pod::Pod> pods = {Cpus("a", "7")};
  WorkloadOptions stay;
  stay.repeat = 3;
  absl::StatusOr<RunResult> kept = Simulate(Policy("single-numa-node"), Arrivals(pods, stay));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->admitted, 1);  // node 1 holds one; node 0 has only 6
  EXPECT_EQ(kept->releases, 0);

  WorkloadOptions churn = stay;
  churn.release_after = 1;
  absl::StatusOr<RunResult> churned = Simulate(Policy("single-numa-node"), Arrivals(pods, churn));
  ASSERT_TRUE(churned.ok());
  EXPECT_EQ(churned->admitted, 3);
  EXPECT_EQ(churned->releases, 2);
  EXPECT_EQ(churned->records.pods.size(), 1u);

  // The annotation overrides --release-after for its pod.
  pod::Pod annotated = Cpus("b", "7");
  annotated.annotations[std::string(kLifetimeAnnotation)] = "2";
  churn.release_after = std::nullopt;
  absl::StatusOr<RunResult> every_other =
      Simulate(Policy("single-numa-node"), Arrivals({annotated}, churn));
  ASSERT_TRUE(every_other.ok());
  EXPECT_EQ(every_other->admitted, 2);  // the first, then the third once the first is gone
}

TEST(WorkloadTest, SameSeedSameArrivalsAndDecisions) {
  std::vector<pod::Pod> pods;
  for (int i = 1; i <= 6; ++i) pods.push_back(Cpus("p" + std::to_string(i), std::to_string(i)));
  WorkloadOptions options;
  options.repeat = 3;
  options.order = Order::kShuffle;
  options.seed = 42;
  const std::vector<Arrival> first = Arrivals(pods, options);
  const std::vector<Arrival> second = Arrivals(pods, options);
  ASSERT_EQ(first.size(), 18u);
  std::vector<std::string> names_first, names_second;
  for (const Arrival& a : first) names_first.push_back(a.pod.name);
  for (const Arrival& a : second) names_second.push_back(a.pod.name);
  EXPECT_EQ(names_first, names_second);
  EXPECT_EQ(first[0].pod.uid, "sim-00000");

  options.seed = 43;
  std::vector<std::string> names_other;
  for (const Arrival& a : Arrivals(pods, options)) names_other.push_back(a.pod.name);
  EXPECT_NE(names_first, names_other);

  absl::StatusOr<RunResult> a = Simulate(Policy("best-effort"), first);
  absl::StatusOr<RunResult> b = Simulate(Policy("best-effort"), second);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->decisions.size(), b->decisions.size());
  for (size_t i = 0; i < a->decisions.size(); ++i) {
    EXPECT_EQ(a->decisions[i].admitted, b->decisions[i].admitted);
    EXPECT_EQ(a->decisions[i].containers, b->decisions[i].containers);
  }
  EXPECT_EQ(a->records, b->records);
}

TEST(WorkloadTest, RefusesBadCountsAndLifetimes) {
  WorkloadOptions zero;
  zero.repeat = 0;
  EXPECT_FALSE(BuildArrivals({Cpus("a", "1")}, zero).ok());
  pod::Pod bad = Cpus("a", "1");
  bad.annotations[std::string(kLifetimeAnnotation)] = "soon";
  absl::StatusOr<std::vector<Arrival>> refused = BuildArrivals({bad}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("soon"), std::string::npos);
  WorkloadOptions copies;
  copies.repeat = 2;
  const std::vector<Arrival> two = Arrivals({Cpus("a", "1")}, copies);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].pod.name, "pod-a");
  EXPECT_EQ(two[1].pod.name, "pod-a-1");
}

}  // namespace
}  // namespace topologyd::simulate
