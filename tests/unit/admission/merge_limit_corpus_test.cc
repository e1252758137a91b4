// Headroom of the production merge limits: the real providers' hints (CPU, memory, hugepages,
// devices; empty and busy nodes; every policy and scope) on every machine of
// the recorded-machine corpus stay far below MergeLimits' defaults and are never refused. Prints
// the peak counts per machine.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "lib/admission/admission.h"
#include "lib/admission/reasons.h"
#include "lib/hints/merge_internal.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/require_component.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

// The admission benchmark's node (bench/admission_bench.cc): static CPU manager, Static memory
// manager, 2 MiB hugepages on every NUMA node with CPUs (the XML exports record none), and a
// device per NUMA node with CPUs, or the machine's GPUs.
absl::StatusOr<NodePolicy> CorpusNode(topology::Topology t, const std::string& policy,
                                      const std::string& scope) {
  config::Config c;
  c.cpu_manager_policy = "static";
  c.cpu_reserved_count = 1;
  c.topology_manager_policy = policy;
  c.topology_manager_scope = scope;
  c.memory_manager_policy = "Static";
  config::DevicePoolConfig pool{.resource_name = "example.com/dev", .pci = {}, .devices = {}};
  bool have_gpus = false;
  for (const auto& d : t.pci_devices) have_gpus |= d.kind == topology::DeviceKind::kGpu;
  for (topology::NumaNode& n : t.numa_nodes) {
    if (n.cpus.IsEmpty()) continue;
    // 2048 pages of 2 MiB where a quarter of the node's memory allows it.
    n.hugepages = {{2048, std::min<uint64_t>(2048, n.memory_bytes / 4 / (2 * kMi))}};
    if (!have_gpus) {
      pool.devices.push_back({.id = "dev-" + std::to_string(n.id), .numa_nodes = {n.id}});
    }
  }
  if (have_gpus) {
    for (const auto& d : t.pci_devices) {
      if (d.kind == topology::DeviceKind::kGpu) {
        pool.devices.push_back({.id = d.busid, .numa_nodes = d.numa_nodes});
      }
    }
  }
  c.devices = {pool};
  for (const topology::NumaNode& n : t.numa_nodes) {
    if (n.memory_bytes >= kGi) {
      c.reserved_memory = {{.numa_node = n.id, .limits = {{"memory", "256Mi"}}}};
      break;
    }
  }
  return BuildNodePolicy(c, t);
}

// Guaranteed pods of every shape the providers distinguish: small and large CPU counts (one
// node, several nodes), memory that fits one node or not, hugepages, devices, init containers.
std::vector<pod::Pod> ShapedPods(int cpus_per_node, int round) {
  const std::string big = std::to_string(std::max(2, cpus_per_node + 1));
  const std::string tag = std::to_string(round);
  std::vector<pod::Pod> pods;
  pods.push_back(Pod("small" + tag, {Ctr("a", {{"cpu", "1"}, {"memory", "256Mi"}})}));
  pods.push_back(Pod("huge" + tag, {Ctr("a", {{"cpu", "2"},
                                              {"memory", "2Gi"},
                                              {"hugepages-2Mi", "512Mi"},
                                              {"example.com/dev", "1"}})}));
  pods.push_back(Pod("wide" + tag, {Ctr("a", {{"cpu", big}, {"memory", "1Gi"}})}));
  pods.push_back(Pod("bigmem" + tag, {Ctr("a", {{"cpu", "2"},
                                                {"memory", "48Gi"},
                                                {"hugepages-2Mi", "1Gi"},
                                                {"example.com/dev", "2"}})}));
  pods.push_back(Pod("init" + tag,
                     {Ctr("a", {{"cpu", "2"}, {"memory", "512Mi"}, {"example.com/dev", "1"}}),
                      Ctr("b", {{"cpu", "1"}, {"memory", "3Gi"}, {"hugepages-2Mi", "64Mi"}})},
                     {Ctr("i", {{"cpu", big}, {"memory", "256Mi"}})}));
  return pods;
}

struct Peak {
  uint64_t masks = 0;
  uint64_t steps = 0;
  std::string where;

  void Add(const hints::internal::MergeStats& stats, const std::string& at) {
    if (stats.peak_masks > masks || stats.steps > steps) where = at;
    masks = std::max(masks, stats.peak_masks);
    steps = std::max(steps, stats.steps);
  }
};

// Replays every merge of `r` that admission finished through the counting merge under the
// production limits: it must give the same answer, and its counts go to `peak`. A merge
// admission gave up goes to `refused` (replaying it would only spend the limit again).
void Measure(const NodePolicy& node, const AdmissionResult& r, const std::string& where, Peak& peak,
             std::vector<std::string>& refused) {
  for (const MergeStep& step : r.explanation.merges) {
    if (!step.limit_error.empty()) {
      EXPECT_EQ(r.reason, kTopologyAffinityError) << where;
      refused.push_back(where + ": " + step.limit_error);
      continue;
    }
    hints::MergeInput input;
    input.num_nodes = node.num_nodes();
    input.distances = node.distances;
    input.policy = r.explanation.policy;
    input.options = node.options;
    for (const ProviderHintsEntry& p : step.providers) input.providers.push_back(p.hints);
    hints::internal::MergeStats stats;
    absl::StatusOr<hints::MergeResult> merged = hints::internal::MergeWithinForTest(
        input, hints::MergeLimits(), hints::internal::ReachEngine::kAuto, &stats);
    ASSERT_TRUE(merged.ok()) << where << ": " << merged.status();
    EXPECT_EQ(*merged, step.merged) << where;
    peak.Add(stats, where);
  }
}

TEST(MergeLimitTest, RealProvidersStayFarBelowTheDefaults) {
  if (!std::filesystem::is_directory(TOPOLOGYD_SHARED_TOPOLOGIES)) {
    CORPUS_SKIP_OR_FAIL() << "shared topologies not found at " << TOPOLOGYD_SHARED_TOPOLOGIES;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(TOPOLOGYD_SHARED_TOPOLOGIES)) {
    if (e.path().extension() == ".xml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  Peak overall;
  std::vector<std::string> refused;
  int merges = 0;
  for (const std::filesystem::path& file : files) {
    absl::StatusOr<topology::Topology> machine =
        topology::LoadTopology(topology::TopologySource::Xml(file.string()));
    ASSERT_TRUE(machine.ok()) << machine.status();
    // Above 22 NUMA nodes (no dense merge engine) only restricted, container scope, where
    // those machines' largest merges are: the other combinations add minutes under the
    // sanitizers and nothing larger.
    const bool large = machine->numa_nodes.size() > 22;
    const std::vector<std::string> policies =
        large ? std::vector<std::string>{"restricted"}
              : std::vector<std::string>{"best-effort", "restricted", "single-numa-node"};
    const std::vector<std::string> scopes = large ? std::vector<std::string>{"container"}
                                                  : std::vector<std::string>{"container", "pod"};
    int cpus_per_node = 1;
    for (const topology::NumaNode& n : machine->numa_nodes) {
      cpus_per_node = std::max(cpus_per_node, n.cpus.Size());
    }
    const size_t refused_before = refused.size();
    Peak peak;
    for (const std::string& policy : policies) {
      for (const std::string& scope : scopes) {
        absl::StatusOr<NodePolicy> node = CorpusNode(*machine, policy, scope);
        ASSERT_TRUE(node.ok()) << file << ": " << node.status();
        // The node fills up round by round, so later pods meet busy nodes (explicit memory
        // lists, fragmented CPUs).
        AllocationState state = node->empty_state;
        for (int round = 0; round < 3; ++round) {
          for (const pod::Pod& pod : ShapedPods(cpus_per_node, round)) {
            absl::StatusOr<AdmissionResult> r = Admit(*node, state, pod);
            ASSERT_TRUE(r.ok()) << r.status();
            merges += static_cast<int>(r->explanation.merges.size());
            Measure(*node, *r,
                    file.filename().string() + " " + policy + " " + scope + " " + pod.uid, peak,
                    refused);
            if (r->admitted) state = r->new_state;
          }
        }
      }
    }
    std::cout << file.filename().string() << " (" << machine->numa_nodes.size()
              << " NUMA nodes): peak " << peak.masks << " masks, " << peak.steps << " steps ("
              << peak.where << "); " << refused.size() - refused_before << " merges refused\n";
    // Up to 22 NUMA nodes the dense engine bounds the memory provider's explicit lists, above
    // it the lists' own cap (lib/memory kMaxHintsWithoutDenseMerge): nothing may be refused,
    // and everything stays well below the defaults, so that a provider change that comes near
    // them shows here long before a pod is refused.
    EXPECT_EQ(refused.size(), refused_before) << file << ": " << refused.back();
    overall.Add({peak.masks, peak.steps}, peak.where);
  }
  std::cout << merges << " merges; peak: " << overall.masks << " masks, " << overall.steps
            << " steps (" << overall.where << ")\n";
  for (const std::string& r : refused) std::cout << "refused: " << r << "\n";
  EXPECT_LE(overall.masks, hints::MergeLimits::kDefaultMaxMasks / 8) << overall.where;
  EXPECT_LE(overall.steps, hints::MergeLimits::kDefaultMaxSteps / 16) << overall.where;
}

}  // namespace
}  // namespace topologyd::admission
