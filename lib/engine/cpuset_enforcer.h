// CpusetEnforcer: keeps the kernel's cpusets in line with the allocation records.
//
// Every container bound to a cgroup (by Allocate) gets a target: its exclusive CPUs, or the
// current shared pool; and its memory NUMA nodes as cpuset.mems when the Memory Manager
// placed it (otherwise mems are left alone). After each durable state change the engine
// passes the whole desired picture, whose cgroups the cgroup manager then owns (and no
// other); the cgroup layer orders the writes so the kernel never refuses one, and reports
// failures per container without aborting the batch. Reconcile() reads every target back,
// repairs drift and reports cgroups that have disappeared. The enforcer adds the lock the
// manager needs and the counters Status shows.
//
// Thread-safety: all methods are serialised internally.
#pragma once

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/cgroup/cpuset_manager.h"
#include "lib/config/config.h"
#include "lib/cpuset/cpuset.h"
#include "lib/state/state.h"

namespace topologyd::engine {

struct EnforcerCounters {
  uint64_t writes = 0;
  uint64_t failed_writes = 0;
  uint64_t drift_repairs = 0;
  // Cgroups the last reconcile found running on less than their cpuset (v2; see
  // cgroup::ConstrainedCgroup). A gauge, not a running total.
  uint64_t constrained = 0;
};

class CpusetEnforcer {
 public:
  // Opens the configured cgroup root (detecting the version when `auto`). `sink` sees every
  // write, made or (dry run) not.
  static absl::StatusOr<std::unique_ptr<CpusetEnforcer>> Open(const config::CgroupConfig& config,
                                                              cgroup::WriteSink sink);

  // The targets for every container of `state` that has a cgroup.
  static std::vector<cgroup::CpusetTarget> DesiredTargets(const state::State& state,
                                                          const CpuSet& shared_pool);

  // Makes the kernel match `desired`, whose cgroups become the ones the manager owns
  // (cgroup::CpusetManager::RegisterOnly). Per-container failures are passed to the sink and
  // counted as failed writes, also those that stopped before any write (an invalid path, a
  // symlink or an unreadable file in the way); a cgroup that does not exist (yet, or any more)
  // is not a failure here.
  cgroup::ApplyResult Apply(const std::vector<cgroup::CpusetTarget>& desired);

  // Reads back and repairs; `gone` lists cgroups missing since the given time.
  cgroup::ReconcileReport Reconcile(const std::vector<cgroup::CpusetTarget>& desired,
                                    cgroup::Timestamp now);

  EnforcerCounters counters() const;
  std::string version_name() const;

 private:
  CpusetEnforcer(std::unique_ptr<cgroup::CpusetManager> manager, std::string version_name,
                 cgroup::WriteSink sink);
  void Count(const cgroup::ApplyResult& result, const std::vector<cgroup::CpusetTarget>& desired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A target that failed without a write of its own to show for it.
  void ReportUnwritten(const cgroup::CpusetTarget& target, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // The manager is not thread-safe: the pointer is set once, what it points to is guarded.
  std::unique_ptr<cgroup::CpusetManager> manager_ ABSL_PT_GUARDED_BY(mu_);
  EnforcerCounters counters_ ABSL_GUARDED_BY(mu_);
  std::string version_name_;
  cgroup::WriteSink sink_;
};

}  // namespace topologyd::engine
