// Randomized invariants of the Memory Manager static policy (hints and allocation) on constructed
// and, when present, real machines: along random admit/release streams no NUMA node gives out
// more bytes than it has (reserved + free == allocatable), groups stay consistent, kubelet's
// validateState accepts every intermediate state, and releasing every pod restores the table.
#include <filesystem>
#include <random>

#include "gtest/gtest.h"

#include "lib/memory/memory_policy.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/require_component.h"
#include "tests/unit/memory/memory_test_util.h"

namespace topologyd::memory {
namespace {

using namespace ::topologyd::memory::testing;  // NOLINT

void CheckState(const MemoryState& s, const topology::Topology& topo,
                const std::vector<ReservedMemory>& reserved) {
  for (const auto& [id, node] : s.machine_state) {
    for (const auto& [type, t] : node.memory_map) {
      ASSERT_EQ(t.reserved + t.free, t.allocatable) << "node " << id << " " << type;
    }
    if (node.number_of_assignments == 0) {
      ASSERT_EQ(node.cells, std::vector<int>{id});
    }
    if (node.cells.size() > 1) {
      for (int other : node.cells) ASSERT_EQ(s.machine_state.at(other).cells, node.cells);
    }
  }
  const absl::Status valid = ValidateMemoryState(s, topo, reserved);
  ASSERT_TRUE(valid.ok()) << valid;
}

void RunStream(const topology::Topology& topo, const std::vector<ReservedMemory>& reserved,
               uint32_t seed, int steps) {
  auto initial = NewMemoryState(topo, reserved);
  ASSERT_TRUE(initial.ok()) << initial.status();
  uint64_t biggest = 0;
  uint64_t hugepages = 0;
  for (const auto& [id, node] : initial->machine_state) {
    biggest = std::max(biggest, node.memory_map.at("memory").allocatable);
    auto hp = node.memory_map.find("hugepages-2Mi");
    if (hp != node.memory_map.end()) hugepages = std::max(hugepages, hp->second.allocatable);
  }
  std::mt19937_64 rng(seed);
  MemoryState state = *initial;
  std::map<std::string, pod::Pod> pods;
  int next_uid = 0;
  for (int step = 0; step < steps; ++step) {
    if (pods.empty() || rng() % 10 < 6) {
      auto size = [&](uint64_t scale) {
        return scale == 0 ? 0 : (rng() % (scale + scale / 2)) / kMb * kMb + kMb;
      };
      auto ctr = [&](std::string name, bool sidecar) {
        pod::Container c = Ctr(std::move(name), size(biggest / 3), 0, true, sidecar);
        if (hugepages > 0 && rng() % 2 == 0) {
          const auto q = pod::Quantity::FromInt(
              static_cast<int64_t>(size(hugepages / 3) / (2 * kMb) * 2 * kMb + 2 * kMb));
          c.limits["hugepages-2Mi"] = c.requests["hugepages-2Mi"] = q;
        }
        return c;
      };
      std::vector<pod::Container> init;
      if (rng() % 3 == 0) init.push_back(ctr("init", rng() % 3 == 0));
      const pod::Pod pod = Pod("pod" + std::to_string(next_uid++), {ctr("app", false)}, init);
      MemoryState trial = state;
      bool ok = true;
      std::vector<std::string> order;
      for (const auto& c : pod.init_containers) order.push_back(c.name);
      for (const auto& c : pod.containers) order.push_back(c.name);
      for (const std::string& name : order) {
        auto h = GetContainerTopologyHints(trial, pod, name);
        ASSERT_TRUE(h.ok()) << h.status();
        hints::TopologyHint affinity;
        const int choice = static_cast<int>(rng() % 3);
        if (choice == 1 && h->has_value() && (*h)->contains("memory") &&
            !(*h)->at("memory")->hints.empty()) {
          const auto& list = *(*h)->at("memory");
          affinity = list.hints[rng() % list.hints.size()];
        } else if (choice == 2) {
          // A merged hint narrower than memory's own (the topology manager ANDs providers),
          // including single nodes inside a multi-NUMA group, which Allocate must refuse.
          const size_t pos = rng() % trial.machine_state.size();
          affinity.affinity = hints::NumaMask(uint64_t{1} << pos);
        }
        auto next = Allocate(trial, pod, name, affinity);
        if (!next.ok()) {
          ASSERT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition) << next.status();
          ok = false;
          break;
        }
        trial = *next;
      }
      if (ok) {
        state = trial;
        pods.emplace(pod.uid, pod);
      }
    } else {
      auto it = pods.begin();
      std::advance(it, static_cast<long>(rng() % pods.size()));
      state = RemovePod(state, it->first);
      pods.erase(it);
    }
    CheckState(state, topo, reserved);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (const auto& [uid, pod] : pods) state = RemovePod(state, uid);
  EXPECT_EQ(state.machine_state, initial->machine_state);
  EXPECT_TRUE(state.assignments.empty());
}

TEST(MemoryPropertyTest, ConstructedMachine) {
  const topology::Topology topo = Topo(4, 16 * kGb, 2, 512);
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    RunStream(topo, {{0, {{"memory", kGb}}}, {2, {{"memory", 512 * kMb}}}}, seed, 150);
    if (HasFatalFailure()) return;
  }
}

TEST(MemoryPropertyTest, SharedTopologies) {
  const std::filesystem::path dir = TOPOLOGYD_SHARED_TOPOLOGIES;
  if (!std::filesystem::is_directory(dir)) {
    CORPUS_SKIP_OR_FAIL() << "shared topologies not found at " << dir;
  }
  int tested = 0;
  for (const char* file :
       {"amd-epyc7742-2s-nps4-4xa100-ib.xml", "intel-spr8480-2s-snc4-4xh100.xml",
        "intel-knl7250-snc4-flat-mcdram.xml", "amd-opteron-4s-8numa-sparse-node-ids.xml"}) {
    const std::filesystem::path path = dir / file;
    if (!std::filesystem::exists(path)) continue;
    auto topo = topology::LoadTopology(topology::TopologySource::Xml(path.string()));
    ASSERT_TRUE(topo.ok()) << file << ": " << topo.status();
    // Reserve 256Mi on the node with the most memory.
    const topology::NumaNode* best = nullptr;
    for (const auto& n : topo->numa_nodes) {
      if (best == nullptr || n.memory_bytes > best->memory_bytes) best = &n;
    }
    ASSERT_NE(best, nullptr);
    ASSERT_GT(best->memory_bytes, 256 * kMb) << file;
    SCOPED_TRACE(file);
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      RunStream(*topo, {{best->id, {{"memory", 256 * kMb}}}}, seed, 100);
      if (HasFatalFailure()) return;
    }
    ++tested;
  }
  if (tested == 0) CORPUS_SKIP_OR_FAIL() << "none of the chosen topologies is in " << dir;
}

}  // namespace
}  // namespace topologyd::memory
