// One simulated run: a workload's arrivals admitted, and released as their lifetimes end, by
// a ledger::Ledger under one node policy, exactly as the daemon's engine admits and releases
// them (the same Ledger::Admit / Release calls; nothing is decided here), with what the
// report needs recorded along the way.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/admission/node_policy.h"
#include "lib/simulate/combinations.h"
#include "lib/simulate/metrics.h"
#include "lib/simulate/workload.h"
#include "lib/state/state.h"

namespace topologyd::simulate {

// One arrival's decision.
struct Decision {
  std::string uid;
  std::string name;  // namespace/name
  bool admitted = false;
  std::string reason;  // a rejection's
  std::string message;
  double combinations = 0;  // kubelet's merge would enumerate this many (KubeletCombinations)
  std::vector<state::ContainerRecord> containers;  // an admission's, as the daemon answers it
};

struct RunResult {
  std::vector<Decision> decisions;  // in arrival order
  int admitted = 0;
  int rejected = 0;
  std::map<std::string, int> rejections;  // reason -> pods
  int releases = 0;
  // Over every admitted container (regular init containers left out), also those released
  // later: how many were pinned, on one NUMA node, on the fewest nodes possible.
  int pinned_containers = 0;
  int single_numa_containers = 0;
  int fewest_nodes_containers = 0;
  double max_combinations = 0;
  // Admissions (kubelet's merge included) over `slow_seconds`: with kKubeletNsPerCombination,
  // at least this long.
  int slow_admissions = 0;
  double seconds = 0;  // wall time of the admissions and releases
  EndState end;
  state::State records;  // what is held at the end, as the daemon's state file stores it
};

struct RunOptions {
  double ns_per_combination = kKubeletNsPerCombination;
  double slow_seconds = 1.0;
};

// Runs `arrivals` on an empty node under `policy`. A Status error only when a request cannot
// be processed at all (the ledger's INVALID_ARGUMENT, e.g. a container name used twice).
absl::StatusOr<RunResult> Simulate(std::shared_ptr<const admission::NodePolicy> policy,
                                   const std::vector<Arrival>& arrivals,
                                   const RunOptions& options = RunOptions());

}  // namespace topologyd::simulate
