// Admit() of one pod as its number of containers grows, on a synthetic 2-socket machine with a
// device pool: the cost per container must not depend on the pod's size (Google Benchmark fits
// the complexity: O(N) per pod is what is wanted, O(N^2) what a per-container walk of the pod or
// copy of the state would give). Cases:
//   - burstable: every container in the shared pool (nothing to pin; the walk and copies are
//     all that can grow);
//   - guaranteed_memory: Guaranteed fractional-CPU containers under memoryManagerPolicy Static
//     (every container gets memory blocks);
//   - readmit: the same Guaranteed pod admitted again onto the state that holds it (every
//     container keeps what it holds).
// Counter "per_container" is the time per container.
#include <string>

#include "benchmark/benchmark.h"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/topology/hwloc_source.h"

namespace topologyd::admission {
namespace {

const NodePolicy& Node() {
  static const NodePolicy* const node = [] {
    auto config = config::ParseConfig(
        "cpuManagerPolicy: static\n"
        "reservedSystemCPUs: \"0\"\n"
        "topologyManagerPolicy: best-effort\n"
        "memoryManagerPolicy: Static\n"
        "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
        "devices:\n"
        "  - resourceName: example.com/dev\n"
        "    devices: [{id: d0, numaNode: 0}, {id: d1, numaNode: 1}]\n",
        "bench.yaml");
    auto machine = topology::LoadTopology(
        topology::TopologySource::Synthetic("pack:2 numa:1(memory=1024GB) core:16 pu:2"));
    if (!config.ok() || !machine.ok()) abort();
    auto built = BuildNodePolicy(*config, *machine);
    if (!built.ok()) abort();
    return new NodePolicy(*std::move(built));
  }();
  return *node;
}

pod::Pod ManyContainers(int count, bool guaranteed) {
  pod::Pod p;
  p.uid = "big";
  p.namespace_name = "default";
  p.name = "big";
  for (int i = 0; i < count; ++i) {
    pod::Container c;
    c.name = "c" + std::to_string(i);
    c.requests["cpu"] = *pod::Quantity::Parse("100m");
    c.requests["memory"] = *pod::Quantity::Parse("1Mi");
    if (guaranteed) c.limits = c.requests;
    (i % 4 == 0 ? p.init_containers : p.containers).push_back(std::move(c));
  }
  return p;
}

void Run(benchmark::State& bench, bool guaranteed, bool again) {
  const int count = static_cast<int>(bench.range(0));
  const pod::Pod pod = ManyContainers(count, guaranteed);
  AllocationState state = Node().empty_state;
  if (again) {
    auto first = Admit(Node(), state, pod);
    if (!first.ok() || !first->admitted) abort();
    state = first->new_state;
  }
  for (auto _ : bench) {
    auto r = Admit(Node(), state, pod);
    if (!r.ok() || !r->admitted) {
      bench.SkipWithError("not admitted");
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  bench.SetComplexityN(count);
  bench.counters["per_container"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_Burstable(benchmark::State& bench) { Run(bench, false, false); }
void BM_GuaranteedMemory(benchmark::State& bench) { Run(bench, true, false); }
void BM_Readmit(benchmark::State& bench) { Run(bench, true, true); }

BENCHMARK(BM_Burstable)
    ->RangeMultiplier(4)
    ->Range(256, 16384)
    ->Complexity()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GuaranteedMemory)
    ->RangeMultiplier(4)
    ->Range(256, 16384)
    ->Complexity()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Readmit)
    ->RangeMultiplier(4)
    ->Range(256, 16384)
    ->Complexity()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topologyd::admission

BENCHMARK_MAIN();
