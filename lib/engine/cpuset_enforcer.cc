#include "lib/engine/cpuset_enforcer.h"

#include <set>

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
  manager_config.options.sink = std::move(sink);
  TOPOLOGYD_ASSIGN_OR_RETURN(std::unique_ptr<cgroup::CpusetManager> manager,
                             cgroup::CpusetManager::Open(std::move(manager_config)));
  std::string name = manager->version() == cgroup::CgroupVersion::kV1 ? "v1" : "v2";
  return std::unique_ptr<CpusetEnforcer>(new CpusetEnforcer(std::move(manager), name));
}

CpusetEnforcer::CpusetEnforcer(std::unique_ptr<cgroup::CpusetManager> manager,
                               std::string version_name)
    : manager_(std::move(manager)), version_name_(std::move(version_name)) {}

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

std::vector<cgroup::CpusetTarget> CpusetEnforcer::SyncRegistrations(
    const std::vector<cgroup::CpusetTarget>& desired) {
  std::set<std::string> wanted;
  for (const auto& t : desired) wanted.insert(t.cgroup);
  for (const std::string& registered : manager_->Registered()) {
    if (!wanted.count(registered)) manager_->Unregister(registered);
  }
  std::vector<cgroup::CpusetTarget> valid;
  for (const auto& t : desired) {
    // Paths were validated when the container was bound; a failure here means the record
    // predates a stricter rule and the container is skipped rather than written.
    if (manager_->Register(t.cgroup).ok()) valid.push_back(t);
  }
  return valid;
}

void CpusetEnforcer::Count(const cgroup::ApplyResult& result) {
  counters_.writes += static_cast<uint64_t>(result.writes_ok);
  counters_.failed_writes += static_cast<uint64_t>(result.writes_failed);
}

cgroup::ApplyResult CpusetEnforcer::Apply(const std::vector<cgroup::CpusetTarget>& desired) {
  std::lock_guard<std::mutex> lock(mu_);
  cgroup::ApplyResult result = manager_->Apply(SyncRegistrations(desired));
  Count(result);
  return result;
}

cgroup::ReconcileReport CpusetEnforcer::Reconcile(const std::vector<cgroup::CpusetTarget>& desired,
                                                  cgroup::Timestamp now) {
  std::lock_guard<std::mutex> lock(mu_);
  cgroup::ReconcileReport report = manager_->Reconcile(SyncRegistrations(desired), now);
  Count(report.apply);
  counters_.drift_repairs += static_cast<uint64_t>(report.repaired);
  return report;
}

EnforcerCounters CpusetEnforcer::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

std::string CpusetEnforcer::version_name() const { return version_name_; }

}  // namespace topologyd::engine
