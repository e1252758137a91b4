#include "lib/simulate/run.h"

#include <chrono>
#include <utility>

#include "lib/ledger/ledger.h"

namespace topologyd::simulate {

absl::StatusOr<RunResult> Simulate(std::shared_ptr<const admission::NodePolicy> policy,
                                   const std::vector<Arrival>& arrivals,
                                   const RunOptions& options) {
  absl::StatusOr<ledger::Ledger> restored =
      ledger::Ledger::Restore(policy, state::State{}, "(simulation)", "(simulation)");
  if (!restored.ok()) return restored.status();
  ledger::Ledger ledger = *std::move(restored);

  RunResult run;
  WorkloadSizes sizes;
  std::multimap<size_t, std::string> due;  // arrival index -> uid released just before it
  const double slow_combinations = options.slow_seconds * 1e9 / options.ns_per_combination;
  std::chrono::steady_clock::duration spent{};
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const Arrival& arrival = arrivals[i];
    AddSizes(arrival.pod, sizes);
    const auto start = std::chrono::steady_clock::now();
    for (auto it = due.begin(); it != due.end() && it->first <= i; it = due.erase(it)) {
      if (absl::Status released = ledger.Release(it->second, std::nullopt); !released.ok()) {
        return released;
      }
      ++run.releases;
    }
    absl::StatusOr<ledger::AdmitOutcome> outcome = ledger.Admit(arrival.pod);
    spent += std::chrono::steady_clock::now() - start;
    if (!outcome.ok()) {
      return absl::Status(outcome.status().code(), arrival.pod.namespace_name + "/" +
                                                       arrival.pod.name + ": " +
                                                       std::string(outcome.status().message()));
    }
    Decision d;
    d.uid = arrival.pod.uid;
    d.name = arrival.pod.namespace_name + "/" + arrival.pod.name;
    d.admitted = outcome->admitted;
    d.reason = outcome->reason;
    d.message = outcome->message;
    d.combinations = KubeletCombinations(outcome->explanation);
    if (d.combinations > run.max_combinations) run.max_combinations = d.combinations;
    if (d.combinations > slow_combinations) ++run.slow_admissions;
    if (d.admitted) {
      // The containers start in order, as kubelet starts them: finished init containers'
      // memory is free again for the next arrivals.
      for (const state::ContainerRecord& c : outcome->containers) {
        if (absl::Status started = ledger.ContainerStarted(d.uid, c.name); !started.ok()) {
          return started;
        }
      }
      ++run.admitted;
      for (const state::ContainerRecord& c : outcome->containers) {
        if (c.init && !c.restartable) continue;
        const Placement p = PlacementOf(*policy, c);
        if (!p.pinned) continue;
        ++run.pinned_containers;
        if (p.nodes == 1) ++run.single_numa_containers;
        if (p.nodes <= p.fewest) ++run.fewest_nodes_containers;
      }
      d.containers = std::move(outcome->containers);
      if (arrival.lifetime) due.emplace(i + static_cast<size_t>(*arrival.lifetime), d.uid);
    } else {
      ++run.rejected;
      ++run.rejections[d.reason];
    }
    run.decisions.push_back(std::move(d));
  }
  run.seconds = std::chrono::duration<double>(spent).count();
  run.end = MeasureEnd(*policy, ledger, sizes);
  run.records = ledger.Snapshot();
  return run;
}

}  // namespace topologyd::simulate
