// Cost of topology discovery on an 8-NUMA, 256-PU machine with 16 PCI devices (2x EPYC 7742
// NPS4 + 4x A100 + HDR IB): hwloc's XML load, copying hwloc's objects out, applying the model
// rules, and the whole LoadTopology(). The daemon does this at start-up and on reload only,
// so this tracks regressions rather than a budget.
#include <string>

#include "benchmark/benchmark.h"

#include "lib/topology/hwloc_reader.h"
#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_builder.h"
#include "lib/topology/topology_json.h"

namespace topologyd::topology {
namespace {

const TopologySource& Source() {
  static const TopologySource source = TopologySource::Xml(
      std::string(TOPOLOGYD_SHARED_TOPOLOGIES) + "/amd-epyc7742-2s-nps4-4xa100-ib.xml");
  return source;
}

void BM_LoadHwlocXml(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(Source());
    if (!hwloc.ok()) {
      state.SkipWithError(std::string(hwloc.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(hwloc->get());
  }
}
BENCHMARK(BM_LoadHwlocXml)->Unit(benchmark::kMillisecond);

void BM_DescribeMachine(benchmark::State& state) {
  absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(Source());
  if (!hwloc.ok()) {
    state.SkipWithError(std::string(hwloc.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    MachineDescription machine = DescribeMachine(hwloc->get());
    benchmark::DoNotOptimize(machine);
  }
}
BENCHMARK(BM_DescribeMachine)->Unit(benchmark::kMicrosecond);

void BM_BuildTopology(benchmark::State& state) {
  absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(Source());
  if (!hwloc.ok()) {
    state.SkipWithError(std::string(hwloc.status().message()).c_str());
    return;
  }
  const MachineDescription machine = DescribeMachine(hwloc->get());
  for (auto _ : state) {
    absl::StatusOr<Topology> topology = BuildTopology(machine);
    benchmark::DoNotOptimize(topology);
  }
}
BENCHMARK(BM_BuildTopology)->Unit(benchmark::kMicrosecond);

void BM_LoadTopology(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<Topology> topology = LoadTopology(Source());
    if (!topology.ok()) {
      state.SkipWithError(std::string(topology.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(topology);
  }
}
BENCHMARK(BM_LoadTopology)->Unit(benchmark::kMillisecond);

void BM_TopologyToJson(benchmark::State& state) {
  absl::StatusOr<Topology> topology = LoadTopology(Source());
  if (!topology.ok()) {
    state.SkipWithError(std::string(topology.status().message()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(TopologyToJson(*topology).dump());
}
BENCHMARK(BM_TopologyToJson)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topologyd::topology

BENCHMARK_MAIN();
