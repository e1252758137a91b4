// topoctl simulate on the target case: 10,000 pods on an 8-NUMA, 256-CPU machine (hwloc
// synthetic "pack:2 numa:4(memory=64GB) l3:1 core:16 pu:2"; static CPU policy with CPUs 0-1
// reserved, Static memory manager with 1 GiB reserved on node 0).
//
// The workload: four Guaranteed shapes (1, 2, 4 and 8 CPUs with 1 GiB of memory per CPU) and
// a Burstable pod, shuffled (seed 1), each pod released 64 arrivals after its own so the node
// stays busy instead of filling once and refusing the rest.
//
// BM_Simulate is lib/simulate's Simulate(): every admission and release through the
// ledger, plus the metrics and kubelet's combination counts. BM_LedgerBaseline is the same
// arrivals through the bare ledger::Ledger Admit / Release, nothing else: the ratio of the two
// is what the simulation adds. BM_KubeletCombination is the brute-force reference merge
// (kubelet's cross product, tests/unit/hints/reference_merge.h) on 3 providers x 255 hints of
// an 8-node machine; its counter ns_per_combination is the figure behind
// simulate::kKubeletNsPerCombination (docs/simulate.md).
#include <map>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"

#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/ledger/ledger.h"
#include "lib/simulate/run.h"
#include "lib/simulate/workload.h"
#include "lib/topology/hwloc_source.h"
#include "tests/unit/hints/reference_merge.h"

namespace topologyd::simulate {
namespace {

constexpr char kMachine[] = "pack:2 numa:4(memory=64GB) l3:1 core:16 pu:2";

std::shared_ptr<const admission::NodePolicy> Policy(const std::string& tm_policy) {
  const std::string yaml =
      "cpuManagerPolicy: static\n"
      "reservedSystemCPUs: \"0-1\"\n"
      "memoryManagerPolicy: Static\n"
      "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
      "topologyManagerPolicy: " +
      tm_policy + "\n";
  absl::StatusOr<config::Config> c = config::ParseConfig(yaml, "bench.yaml");
  absl::StatusOr<topology::Topology> machine =
      topology::LoadTopology(topology::TopologySource::Synthetic(kMachine));
  if (!c.ok() || !machine.ok()) return nullptr;
  absl::StatusOr<admission::NodePolicy> node = config::BuildNodePolicy(*c, *machine);
  return node.ok() ? std::make_shared<const admission::NodePolicy>(*std::move(node)) : nullptr;
}

pod::Container Container(const std::string& cpu, const std::string& memory) {
  pod::Container c;
  c.name = "app";
  c.requests = {{"cpu", *pod::Quantity::Parse(cpu)}, {"memory", *pod::Quantity::Parse(memory)}};
  c.limits = c.requests;
  return c;
}

std::vector<Arrival> Workload() {
  std::vector<pod::Pod> templates;
  for (const char* cpus : {"1", "2", "4", "8"}) {
    pod::Pod p;
    p.namespace_name = "bench";
    p.name = std::string("guaranteed-") + cpus;
    p.containers = {Container(cpus, std::string(cpus) + "Gi")};
    templates.push_back(p);
  }
  pod::Pod burstable;
  burstable.namespace_name = "bench";
  burstable.name = "burstable";
  burstable.containers = {Container("500m", "512Mi")};
  burstable.containers[0].limits.erase("cpu");
  templates.push_back(burstable);
  WorkloadOptions options;
  options.repeat = 2000;  // 5 x 2000 = 10,000 pods
  options.order = Order::kShuffle;
  options.seed = 1;
  options.release_after = 64;
  return *BuildArrivals(templates, options);
}

const std::vector<Arrival>& Arrivals() {
  static const std::vector<Arrival> arrivals = Workload();
  return arrivals;
}

const char* PolicyName(int64_t i) { return i == 0 ? "best-effort" : "single-numa-node"; }

void BM_Simulate(benchmark::State& state) {
  auto policy = Policy(PolicyName(state.range(0)));
  if (!policy) return state.SkipWithError("the machine or its configuration was refused");
  RunResult run;
  for (auto _ : state) {
    run = *Simulate(policy, Arrivals());
    benchmark::DoNotOptimize(run);
  }
  state.counters["pods"] = static_cast<double>(Arrivals().size());
  state.counters["admitted"] = run.admitted;
  state.counters["us_per_pod"] = benchmark::Counter(
      static_cast<double>(Arrivals().size()) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Simulate)->ArgName("single_numa")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_LedgerBaseline(benchmark::State& state) {
  auto policy = Policy(PolicyName(state.range(0)));
  if (!policy) return state.SkipWithError("the machine or its configuration was refused");
  int admitted = 0;
  for (auto _ : state) {
    ledger::Ledger ledger = *ledger::Ledger::Restore(policy, {}, "", "");
    std::multimap<size_t, std::string> due;
    admitted = 0;
    for (size_t i = 0; i < Arrivals().size(); ++i) {
      for (auto it = due.begin(); it != due.end() && it->first <= i; it = due.erase(it)) {
        benchmark::DoNotOptimize(ledger.Release(it->second, std::nullopt));
      }
      const Arrival& a = Arrivals()[i];
      absl::StatusOr<ledger::AdmitOutcome> outcome = ledger.Admit(a.pod);
      if (outcome.ok() && outcome->admitted) {
        ++admitted;
        due.emplace(i + static_cast<size_t>(*a.lifetime), a.pod.uid);
      }
    }
  }
  state.counters["admitted"] = admitted;
  state.counters["us_per_pod"] = benchmark::Counter(
      static_cast<double>(Arrivals().size()) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LedgerBaseline)->ArgName("single_numa")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_KubeletCombination(benchmark::State& state) {
  hints::MergeInput in;
  in.num_nodes = 8;
  in.policy = hints::Policy::kBestEffort;
  for (int p = 0; p < 3; ++p) {
    hints::ResourceHints rh;
    for (uint64_t m = 1; m <= 255; ++m) {
      rh.hints.push_back(hints::TopologyHint{hints::NumaMask(m), m == (uint64_t{1} << p)});
    }
    in.providers.push_back(
        std::map<std::string, hints::HintList>{{"resource" + std::to_string(p), rh}});
  }
  const double combinations = hints::reference::PermutationCount(in);
  for (auto _ : state) benchmark::DoNotOptimize(hints::reference::ReferenceMerge(in));
  state.counters["combinations"] = combinations;
  state.counters["ns_per_combination"] =
      benchmark::Counter(combinations * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                  benchmark::Counter::kInvert);
}
BENCHMARK(BM_KubeletCombination)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topologyd::simulate

BENCHMARK_MAIN();
