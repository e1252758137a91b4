// Merge() against kubelet's brute-force cross product.
//
// Providers offer every non-empty mask of the machine (as kubelet's CPU/device managers do
// when a request fits anywhere), preferring the one-node masks. "common" = every provider
// prefers the same node so a preferred candidate exists (phase 1); otherwise provider i prefers
// only node i and the merge falls through to the reachable-set phase.
//
// BM_MergeWithin is MergeWithin() under the production limits beside Merge() on the same
// inputs: the cost of checking the counts against limits (Merge() counts too; it shares the
// code path with unlimited limits).
#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"

#include "lib/hints/merge.h"
#include "tests/unit/hints/reference_merge.h"

namespace topologyd::hints {
namespace {

MergeInput AllMasks(int nodes, int providers, bool common) {
  MergeInput in;
  in.num_nodes = nodes;
  in.policy = Policy::kBestEffort;
  const uint64_t all = NumaMask::FirstN(nodes).bits();
  for (int p = 0; p < providers; ++p) {
    ResourceHints rh;
    rh.hints.reserve(static_cast<size_t>(all));
    const uint64_t preferred = common ? 1 : uint64_t{1} << (p % nodes);
    for (uint64_t m = 1; m <= all; ++m)
      rh.hints.push_back(TopologyHint{NumaMask(m), m == preferred});
    in.providers.push_back(std::map<std::string, HintList>{{"resource" + std::to_string(p), rh}});
  }
  return in;
}

// The same lists in the upward-closed form: the one-node masks generate everything.
MergeInput UpwardClosed(int nodes, int providers, bool common) {
  MergeInput in;
  in.num_nodes = nodes;
  in.policy = Policy::kBestEffort;
  for (int p = 0; p < providers; ++p) {
    ResourceHints rh;
    rh.upward_closed = true;
    rh.universe = NumaMask::FirstN(nodes);
    const int preferred = common ? 0 : p % nodes;
    for (int i = 0; i < nodes; ++i)
      rh.hints.push_back(TopologyHint{NumaMask::Of({i}), i == preferred});
    in.providers.push_back(std::map<std::string, HintList>{{"resource" + std::to_string(p), rh}});
  }
  return in;
}

// Adjacent pairs as minimal masks (a request needing two nodes), 64 nodes.
MergeInput Pairs64(int providers) {
  MergeInput in;
  in.num_nodes = 64;
  in.policy = Policy::kRestricted;
  for (int p = 0; p < providers; ++p) {
    ResourceHints rh;
    rh.upward_closed = true;
    rh.universe = NumaMask::FirstN(64);
    for (int i = p % 2; i + 1 < 64; i += 2)
      rh.hints.push_back(TopologyHint{NumaMask::Of({i, i + 1}), true});
    in.providers.push_back(std::map<std::string, HintList>{{"resource" + std::to_string(p), rh}});
  }
  return in;
}

void Report(benchmark::State& state, const MergeResult& r) {
  state.counters["preferred"] = r.hint.preferred;
  state.counters["nodes_in_hint"] = r.hint.affinity ? r.hint.affinity->Count() : -1;
}

void BM_Merge(benchmark::State& state) {
  const MergeInput in = AllMasks(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                 state.range(2) != 0);
  MergeResult r;
  for (auto _ : state) {
    r = Merge(in);
    benchmark::DoNotOptimize(r);
  }
  Report(state, r);
}
BENCHMARK(BM_Merge)
    ->ArgNames({"numa", "providers", "common"})
    ->ArgsProduct({{8}, {2, 3, 4, 6, 8}, {0, 1}})
    ->ArgsProduct({{16}, {4, 8}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_MergeWithin(benchmark::State& state) {
  const MergeInput in = AllMasks(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                 state.range(2) != 0);
  MergeResult r;
  for (auto _ : state) {
    r = *MergeWithin(in);
    benchmark::DoNotOptimize(r);
  }
  Report(state, r);
}
BENCHMARK(BM_MergeWithin)
    ->ArgNames({"numa", "providers", "common"})
    ->ArgsProduct({{8}, {8}, {0, 1}})
    ->ArgsProduct({{16}, {8}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_MergeUpwardClosed(benchmark::State& state) {
  const MergeInput in = UpwardClosed(static_cast<int>(state.range(0)),
                                     static_cast<int>(state.range(1)), state.range(2) != 0);
  MergeResult r;
  for (auto _ : state) {
    r = Merge(in);
    benchmark::DoNotOptimize(r);
  }
  Report(state, r);
}
BENCHMARK(BM_MergeUpwardClosed)
    ->ArgNames({"numa", "providers", "common"})
    ->ArgsProduct({{8, 16, 64}, {4, 8}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_MergePairs64(benchmark::State& state) {
  const MergeInput in = Pairs64(static_cast<int>(state.range(0)));
  MergeResult r;
  for (auto _ : state) {
    r = Merge(in);
    benchmark::DoNotOptimize(r);
  }
  Report(state, r);
}
BENCHMARK(BM_MergePairs64)->ArgName("providers")->Arg(4)->Arg(8)->Unit(benchmark::kMicrosecond);

void BM_BruteForce(benchmark::State& state) {
  const MergeInput in = AllMasks(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                 state.range(2) != 0);
  MergeResult r;
  for (auto _ : state) {
    r = reference::ReferenceMerge(in);
    benchmark::DoNotOptimize(r);
  }
  state.counters["permutations"] = reference::PermutationCount(in);
  Report(state, r);
}
BENCHMARK(BM_BruteForce)
    ->ArgNames({"numa", "providers", "common"})
    ->ArgsProduct({{8}, {2, 3}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topologyd::hints

BENCHMARK_MAIN();
