#include "lib/engine/cpuset_enforcer.h"

#include <algorithm>

#include "lib/cgroup/naming.h"
#include "lib/common/status_macros.h"

namespace topologyd::engine {

absl::StatusOr<std::unique_ptr<CpusetEnforcer>> CpusetEnforcer::Open(
    const config::CgroupConfig& config, cgroup::WriteSink sink) {
  TOPOLOGYD_ASSIGN_OR_RETURN(cgroup::CgroupVersionSetting version,
                             cgroup::ParseCgroupVersionSetting(config.version));
  cgroup::CpusetManager::Config manager_config;
  manager_config.root = config.root;
  manager_config.version = version;
  manager_config.options.apply = config.apply;
  manager_config.options.sink = sink;
  TOPOLOGYD_ASSIGN_OR_RETURN(std::unique_ptr<cgroup::CpusetManager> manager,
                             cgroup::CpusetManager::Open(std::move(manager_config)));
  std::string name = manager->version() == cgroup::CgroupVersion::kV1 ? "v1" : "v2";
  return std::unique_ptr<CpusetEnforcer>(
      new CpusetEnforcer(std::move(manager), name, std::move(sink)));
}

CpusetEnforcer::CpusetEnforcer(std::unique_ptr<cgroup::CpusetManager> manager,
                               std::string version_name, cgroup::WriteSink sink)
    : manager_(std::move(manager)),
      version_name_(std::move(version_name)),
      sink_(std::move(sink)) {}

std::vector<cgroup::CpusetTarget> CpusetEnforcer::DesiredTargets(const state::State& state,
                                                                 const CpuSet& shared_pool) {
  std::vector<cgroup::CpusetTarget> targets;
  for (const auto& [uid, pod] : state.pods) {
    for (const state::ContainerRecord& c : pod.containers) {
      if (c.cgroup.empty()) continue;  // not bound to a runtime container yet
      cgroup::CpusetTarget target;
      target.cgroup = c.cgroup;
      target.cpus = c.exclusive ? c.cpus : shared_pool;
      if (!c.memory.empty()) {
        CpuSet mems;
        for (const auto& [numa, resources] : c.memory) mems.Add(numa);
        target.mems = mems;
      }
      if (target.cpus.IsEmpty()) continue;  // nothing sensible to write; kernel refuses ""
      targets.push_back(std::move(target));
    }
  }
  return targets;
}

void CpusetEnforcer::ReportUnwritten(const cgroup::CpusetTarget& target,
                                     const absl::Status& status) {
  ++counters_.failed_writes;
  if (sink_) {
    sink_({.cgroup = target.cgroup,
           .file = "cpuset.cpus",
           .value = target.cpus.ToString(),
           .status = status});
  }
}

void CpusetEnforcer::Count(const cgroup::ApplyResult& result,
                           const std::vector<cgroup::CpusetTarget>& desired) {
  counters_.writes += static_cast<uint64_t>(result.writes_ok);
  counters_.failed_writes += static_cast<uint64_t>(result.writes_failed);
  for (const cgroup::TargetFailure& failure : result.failures) {
    // Not there (not created yet, or gone: reconcile's grace period handles it).
    if (absl::IsNotFound(failure.status)) continue;
    const bool written = std::any_of(
        result.writes.begin(), result.writes.end(),
        [&](const cgroup::WriteRecord& w) { return w.cgroup == failure.cgroup && !w.status.ok(); });
    if (written) continue;  // the failed write was counted and passed to the sink already
    auto target = std::find_if(desired.begin(), desired.end(), [&](const cgroup::CpusetTarget& t) {
      return t.cgroup == failure.cgroup;
    });
    if (target != desired.end()) ReportUnwritten(*target, failure.status);
  }
}

cgroup::ApplyResult CpusetEnforcer::Apply(const std::vector<cgroup::CpusetTarget>& desired) {
  absl::MutexLock lock(&mu_);
  manager_->RegisterOnly(desired);
  cgroup::ApplyResult result = manager_->Apply(desired);
  Count(result, desired);
  return result;
}

cgroup::ReconcileReport CpusetEnforcer::Reconcile(const std::vector<cgroup::CpusetTarget>& desired,
                                                  cgroup::Timestamp now) {
  absl::MutexLock lock(&mu_);
  manager_->RegisterOnly(desired);
  cgroup::ReconcileReport report = manager_->Reconcile(desired, now);
  Count(report.apply, desired);
  counters_.drift_repairs += static_cast<uint64_t>(report.repaired);
  counters_.constrained = report.constrained.size();
  return report;
}

EnforcerCounters CpusetEnforcer::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

std::string CpusetEnforcer::version_name() const { return version_name_; }

}  // namespace topologyd::engine
