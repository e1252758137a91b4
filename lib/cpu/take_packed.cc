#include "lib/cpu/take_packed.h"

#include "fmt/format.h"

namespace topologyd::cpu {

absl::Status NotEnoughCpusError(int requested, int available) {
  return absl::ResourceExhaustedError(
      fmt::format("not enough cpus available to satisfy request: requested={}, available={}",
                  requested, available));
}

absl::StatusOr<CpuSet> TakeByTopologyNumaPacked(const CpuTopology& topology,
                                                const CpuSet& available, int num_cpus,
                                                CpuSortingStrategy strategy, bool prefer_uncore) {
  CpuAccumulator acc(topology, available, num_cpus, strategy);
  if (acc.IsSatisfied()) return acc.result();
  if (acc.IsFailed()) return NotEnoughCpusError(num_cpus, available.Size());

  acc.TakeFullFirstLevel();
  if (acc.IsSatisfied()) return acc.result();
  acc.TakeFullSecondLevel();
  if (acc.IsSatisfied()) return acc.result();

  if (prefer_uncore) {
    acc.TakeUncoreCache();
    if (acc.IsSatisfied()) return acc.result();
  }
  if (strategy != CpuSortingStrategy::kSpread) {
    acc.TakeFullCores();
    if (acc.IsSatisfied()) return acc.result();
  }
  acc.TakeRemainingCpus();
  if (acc.IsSatisfied()) return acc.result();
  return absl::InternalError("failed to allocate cpus");
}

}  // namespace topologyd::cpu
