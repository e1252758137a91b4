// CpusetManager: the executor. It owns the confined handle on the cpuset hierarchy, the set of
// cgroups topologyd may write, and turns desired cpusets into kernel writes:
//
//   RegisterOnly(desired)        the cgroups topologyd owns become exactly those of `desired`:
//                                the engine passes its whole desired picture (every container
//                                bound now) before each batch. Register(cgroup) and
//                                Unregister(cgroup) declare or forget one. Only registered
//                                cgroups are written.
//   Apply(desired)               read each target's current cpuset, plan (planner.h), write.
//   Reconcile(desired, now)      the same, counted as drift repair, plus "cgroup gone" tracking
//                                and (v2) targets whose effective cpuset lacks desired CPUs.
//
// Failures never abort a batch and never throw: each failed target is reported once, with the
// first error (NOT_FOUND when its cgroup disappeared, FAILED_PRECONDITION when the kernel refused
// the value - EINVAL/EBUSY/ENOSPC are in the message - INVALID_ARGUMENT for a bad or empty
// target, FAILED_PRECONDITION "not registered" for a cgroup topologyd does not own). After a
// target's first failed write its remaining writes are skipped (its state is unknown; the next
// Reconcile retries).
//
// cgroup v2: a cgroup only has cpuset.* files when "cpuset" is in its parent's
// cgroup.subtree_control. Before touching a target, each ancestor (from the hierarchy root down
// to the target's parent) is checked; a missing "+cpuset" is written when
// Options::enable_cpuset_controller is set, otherwise the target fails with FAILED_PRECONDITION
// naming the ancestor. (The kernel refuses enabling with EBUSY where a cgroup has its own
// processes; that is reported the same way.)
//
// Dry run (Options::apply = false): everything is read, planned and reported as usual, each
// write is passed to the sink with dry_run = true, and nothing is written.
//
// Logging: the library does not log. Every write (done, failed or dry-run) is passed to
// Options::sink, in order, for the daemon to log.
//
// Time: the caller passes `now` to Reconcile; the manager only remembers when it first saw each
// registered cgroup missing, so that the engine can apply a grace period before releasing.
//
// Thread-safety: not thread-safe; the engine's enforcer (lib/engine/cpuset_enforcer.h)
// serialises calls under its own lock. The sink is called synchronously on the calling thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/cgroup/cgroup_root.h"
#include "lib/cgroup/layout.h"
#include "lib/cgroup/planner.h"
#include "lib/cgroup/types.h"

namespace topologyd::cgroup {

// Caller-supplied monotonic time (e.g. from the daemon's Clock).
using Timestamp = std::chrono::steady_clock::time_point;

// One write as attempted (or, in a dry run, as it would have been attempted).
struct WriteRecord {
  std::string cgroup;  // relative to the hierarchy root; "" = the root itself
  std::string file;    // "cpuset.cpus", "cpuset.mems" or "cgroup.subtree_control"
  std::string value;   // exactly the bytes written
  bool dry_run = false;
  absl::Status status;  // OK for dry runs
};

using WriteSink = std::function<void(const WriteRecord&)>;

// A target that did not reach its desired state, with its first error.
struct TargetFailure {
  std::string cgroup;
  absl::Status status;
};

struct ApplyResult {
  std::vector<WriteRecord> writes;      // in execution order, including failed ones
  std::vector<TargetFailure> failures;  // at most one per target
  int writes_ok = 0;                    // successful (or dry-run) writes
  int writes_failed = 0;
  int writes_skipped = 0;  // not attempted because the target had already failed
  int unchanged = 0;       // targets that already held their desired values

  bool ok() const { return failures.empty(); }
};

// A registered cgroup whose directory is gone, and since when (first Reconcile that saw it).
struct GoneCgroup {
  std::string cgroup;
  Timestamp missing_since;
};

// cgroup v2: a target whose cpuset files hold what topologyd wrote, but whose tasks may not
// run on all of it: some desired CPUs (or memory nodes) are missing from cpuset.cpus.effective
// (cpuset.mems.effective). A parent narrowed by someone else, or CPUs taken offline or into a
// partition, do that; when none of the desired CPUs is left the kernel even falls back to the
// parent's CPUs. Rewriting the target cannot fix it, so it is reported, not repaired.
struct ConstrainedCgroup {
  std::string cgroup;
  CpuSet cpus;                           // desired
  CpuSet effective_cpus;                 // as the kernel reports it
  std::optional<CpuSet> mems;            // desired, when the target sets mems
  std::optional<CpuSet> effective_mems;  // when read
};

struct ReconcileReport {
  int checked = 0;               // targets examined (registered and valid)
  int in_sync = 0;               // already right
  int drifted = 0;               // found different from desired
  int repaired = 0;              // drifted and rewritten successfully (0 in a dry run)
  std::vector<GoneCgroup> gone;  // also listed in `apply.failures` as NOT_FOUND
  // v2 only, not in a dry run: targets without failures (after the repair) whose effective
  // sets lack part of the desired ones. An unreadable effective file is skipped.
  std::vector<ConstrainedCgroup> constrained;
  ApplyResult apply;  // the writes and failures of the repair
};

class CpusetManager {
 public:
  struct Options {
    bool apply = true;                      // false: dry run
    bool enable_cpuset_controller = false;  // v2: write "+cpuset" into ancestors
    WriteSink sink;                         // optional
  };

  // Everything needed to start from configuration.
  struct Config {
    std::string root = "/sys/fs/cgroup";  // cgroup.root
    CgroupVersionSetting version = CgroupVersionSetting::kAuto;
    PathResolver resolver = PathResolver::kAuto;
    Options options;
  };

  // Opens config.root, detects (or checks) the layout and descends into the cpuset hierarchy.
  // Errors from CgroupRoot::Open and DetectCgroupLayout.
  static absl::StatusOr<std::unique_ptr<CpusetManager>> Open(Config config);

  // `hierarchy` must be the root of the cpuset hierarchy of `version`.
  CpusetManager(CgroupRoot hierarchy, CgroupVersion version, Options options);

  CgroupVersion version() const { return version_; }
  const CgroupRoot& hierarchy() const { return root_; }
  bool dry_run() const { return !options_.apply; }

  // Declares `cgroup` (relative to the hierarchy root) writable. INVALID_ARGUMENT when the path
  // fails ValidateRelativeCgroupPath. Registering twice is fine. Does not touch the filesystem.
  absl::Status Register(std::string_view cgroup);
  // Forgets `cgroup` and its "missing since" record. Unknown paths are ignored.
  void Unregister(std::string_view cgroup);
  // Makes the cgroups of `desired` exactly the registered ones: registers each, and forgets
  // every other (with its "missing since" record). A target whose path fails
  // ValidateRelativeCgroupPath stays unregistered; Apply and Reconcile report it
  // (INVALID_ARGUMENT) as any bad target. Does not touch the filesystem.
  void RegisterOnly(const std::vector<CpusetTarget>& desired);
  bool IsRegistered(std::string_view cgroup) const;

  // Reads cpuset.cpus and cpuset.mems of `cgroup` (any valid path; reading needs no
  // registration). NOT_FOUND when the cgroup or the files are missing.
  absl::StatusOr<CurrentCpuset> Read(std::string_view cgroup) const;

  // Brings every target to its desired values (see the class comment). Targets must be
  // registered and distinct; `cpus` non-empty; `mems` unset or non-empty.
  ApplyResult Apply(const std::vector<CpusetTarget>& desired);

  // Apply(), accounted as drift repair; also updates and reports the gone cgroups.
  ReconcileReport Reconcile(const std::vector<CpusetTarget>& desired, Timestamp now);

 private:
  struct Prepared;
  Prepared Prepare(const std::vector<CpusetTarget>& desired, ApplyResult& result);
  absl::Status EnsureCpusetController(std::string_view cgroup, ApplyResult& result);
  void Execute(const std::vector<CpusetWrite>& plan, ApplyResult& result);
  // The ConstrainedCgroup for `target`, if its effective sets lack desired members.
  std::optional<ConstrainedCgroup> CheckEffective(const CpusetTarget& target) const;
  absl::Status Write(std::string_view cgroup, std::string_view file, std::string value,
                     ApplyResult& result);

  CgroupRoot root_;
  CgroupVersion version_;
  Options options_;
  std::map<std::string, std::optional<Timestamp>, std::less<>> registered_;
  // v2 ancestors known (or, in a dry run, assumed) to have cpuset in cgroup.subtree_control,
  // within one Apply/Reconcile call.
  std::map<std::string, absl::Status, std::less<>> controller_checked_;
};

}  // namespace topologyd::cgroup
