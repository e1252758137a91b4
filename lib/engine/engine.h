// Engine: the one owner of the daemon's mutable state — the current configuration, the
// node policy built from it, the allocation state and its checkpoint — and the one place
// that sequences admission -> checkpoint -> cgroup writes.
//
// Changes (Admit, Allocate, Release) are decided under one mutex, applied in memory with a
// new generation number, and acknowledged only once a checkpoint containing them is durable
// (GroupCommitter: concurrent changes share one fsync); an admission may instead be answered
// when decided, for a caller that waits for AwaitDurableAsync before it acknowledges anything.
// Reads (ListAllocations, Explain, Status) see a consistent snapshot. A refused admission
// changes nothing.
//
// Thread-safety: every public method is safe to call concurrently.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/config/config.h"
#include "lib/config/config_diff.h"
#include "lib/engine/cpuset_enforcer.h"
#include "lib/engine/engine_events.h"
#include "lib/engine/group_commit.h"
#include "lib/ledger/ledger.h"
#include "lib/os/clock.h"
#include "lib/pod/pod.h"
#include "lib/state/file_store.h"
#include "lib/state/state.h"
#include "lib/topology/topology.h"

namespace topologyd::engine {

// Outcome of the last SIGHUP reload, for `topoctl status`.
struct ReloadRecord {
  bool ok = false;
  std::vector<std::string> applied_keys;
  std::vector<std::string> refused_keys;
  std::string error;  // the whole file was rejected (parse/validation), old config kept
  std::vector<std::string> warnings;  // NodePolicyWarnings of a rebuilt node policy
  std::chrono::steady_clock::time_point at;
};

// The state checkpoint as `topoctl status` shows it.
struct CheckpointStatus {
  std::string path;
  uint64_t durable_generation = 0;  // the newest generation known to be on disk
  uint64_t writes = 0;              // attempted since start
  uint64_t failed_writes = 0;
  size_t last_batch = 0;   // changes the last successful write acknowledged
  std::string last_error;  // the last write's error; empty when it succeeded
  // How long the write in progress has been running; empty while none is.
  std::optional<std::chrono::steady_clock::duration> write_running;
};

struct EngineStatus {
  std::chrono::steady_clock::duration uptime{};
  std::shared_ptr<const config::Config> config;
  std::optional<ReloadRecord> last_reload;
  uint64_t state_generation = 0;
  uint32_t admitted_pods = 0;
  CheckpointStatus checkpoint;
  EnforcerCounters cgroup;
  std::string cgroup_version;  // detected ("v1"/"v2"); empty without enforcement
  // Changes are being acknowledged: the last checkpoint write succeeded and the one in
  // progress, if any, has not been running longer than EngineOptions::stalled_write_after.
  bool healthy = true;
  std::string problem;  // why not, for people; empty while healthy
};

struct AdmitReply {
  bool admitted = false;
  std::string reason;
  std::string message;
  // As ledger::AdmitOutcome's: a shared-pool container shows the pool now as `cpus`.
  std::vector<state::ContainerRecord> containers;
  uint64_t generation = 0;
  // False only for an admission answered when decided (AnswerWhen::kDecided) before the
  // checkpoint holding it was written.
  bool durable = true;
};

// When an admission is answered.
enum class AnswerWhen {
  kDurable,  // once the decision is on disk (what Admit acknowledges)
  // As soon as it is decided, for a caller that overlaps the checkpoint write with its own
  // work and then waits for AwaitDurableAsync(generation) before it acknowledges anything.
  kDecided,
};

struct ExplainReply {
  admission::AdmissionResult result;
  std::shared_ptr<const admission::NodePolicy> policy;  // for NUMA id translation
};

// With shared-pool containers showing the current pool.
using AllocationsView = ledger::Allocations;

// The allocations as of one durable generation (`state.generation`), shared by every watcher.
using DurableAllocations = std::shared_ptr<const AllocationsView>;
// Told of each newer durable state: see Engine::WatchAllocations.
using AllocationsListener = std::function<void(DurableAllocations)>;

struct AllocationsWatch {
  uint64_t id = 0;             // for StopWatchingAllocations
  DurableAllocations current;  // the newest durable state when the watch began
};

struct EngineOptions {
  std::shared_ptr<const config::Config> config;
  std::shared_ptr<const topology::Topology> topology;
  state::FileSystem* fs = nullptr;              // checkpoint I/O; must outlive the engine
  std::unique_ptr<CpusetEnforcer> enforcer;     // null: no cgroup enforcement
  std::function<void(const std::string&)> log;  // notable events (releases by reconcile)
  // What an operator may not have meant: a container released because its cgroup is gone.
  // Null: `log`.
  std::function<void(const std::string&)> log_warning;
  // Problems an operator must act on: checkpoint writes starting to fail.
  std::function<void(const std::string&)> log_error;
  // A checkpoint write running longer than this (a hung fsync: a dead disk or NFS server)
  // makes the engine unhealthy, so the watchdog restarts a daemon that cannot acknowledge.
  std::chrono::milliseconds stalled_write_after = std::chrono::seconds(10);
  EngineEvents* events = nullptr;  // null: none; must outlive the engine
  // Durations, uptime, deadlines; null: os::DefaultClock(). Must outlive the engine.
  const os::Clock* clock = nullptr;
};

// The CPU pools and what each NUMA node has given out, from one snapshot, for exports.
struct EngineUsage {
  CpuSet reserved;
  CpuSet shared_pool;     // reserved CPUs included unless strict-cpu-reservation
  CpuSet exclusive_cpus;  // held exclusively by some container
  std::vector<ledger::NumaUsage> per_numa;
};

// How an asynchronous Engine call reports its outcome; it runs exactly once, possibly on
// another thread, and must not block on the Engine.
template <typename T>
using Completion = std::function<void(absl::StatusOr<T>)>;

class Engine {
 public:
  // Builds the node policy, restores the checkpoint (recomputing free pools from its
  // entries) and refuses to start — FAILED_PRECONDITION / DATA_LOSS with a message naming
  // what conflicts and what to do — when the stored allocations cannot be kept.
  static absl::StatusOr<std::unique_ptr<Engine>> Start(EngineOptions options);
  ~Engine();

  // Admits `pod`, idempotently by uid. A refusal is an OK reply with admitted=false.
  // UNAVAILABLE when the checkpoint could not be written (nothing acknowledged).
  absl::StatusOr<AdmitReply> Admit(const pod::Pod& pod);
  // Admit without blocking: decides now and calls `done` once the decision is durable, or at
  // once with AnswerWhen::kDecided (a refusal or an error at once, on this thread).
  void AdmitAsync(const pod::Pod& pod, Completion<AdmitReply> done,
                  AnswerWhen when = AnswerWhen::kDurable);
  // Calls `done` with `generation` once every change up to it is durable: UNAVAILABLE when the
  // checkpoint write meant for it failed, INVALID_ARGUMENT for a generation not reached yet.
  void AwaitDurableAsync(uint64_t generation, Completion<uint64_t> done);
  // Random, fixed for this engine's life: a generation only means something together with the
  // instance that gave it out (a restarted daemon may hand the same number out again).
  const std::string& instance() const { return instance_; }
  // The decision Admit would make now, with every hint; changes nothing.
  absl::StatusOr<ExplainReply> Explain(const pod::Pod& pod) const;
  // Binds an admitted container to its runtime container id and cgroup (relative to the
  // cgroup root; empty = derive from kubelet's naming) and returns its record, a shared-pool
  // container showing the pool now as `cpus`. NOT_FOUND / INVALID_ARGUMENT.
  absl::StatusOr<state::ContainerRecord> Allocate(const std::string& pod_uid,
                                                  const std::string& container,
                                                  const std::string& container_id,
                                                  const std::string& cgroup_path);
  // Allocate without blocking, like AdmitAsync.
  void AllocateAsync(const std::string& pod_uid, const std::string& container,
                     const std::string& container_id, const std::string& cgroup_path,
                     Completion<state::ContainerRecord> done);
  // Releases a pod, or one of its containers. Returns the new generation. NOT_FOUND. With
  // `guard` (one container only), only while the container is bound as it says
  // (ledger::ReleaseGuard: FAILED_PRECONDITION for a runtime container id alone, ABORTED
  // for an id and cgroup).
  absl::StatusOr<uint64_t> Release(const std::string& pod_uid,
                                   const std::optional<std::string>& container,
                                   const ledger::ReleaseGuard* guard = nullptr);
  // Release without blocking, like AdmitAsync.
  void ReleaseAsync(const std::string& pod_uid, const std::optional<std::string>& container,
                    Completion<uint64_t> done);
  void ReleaseAsync(const std::string& pod_uid, const std::optional<std::string>& container,
                    const ledger::ReleaseGuard* guard, Completion<uint64_t> done);
  // The allocations now, changes not yet durable included.
  AllocationsView ListAllocations() const;
  // The names of the pod's containers held now (not yet durable included); empty when the
  // pod is not admitted.
  std::set<std::string> HeldContainers(const std::string& pod_uid) const;

  // Calls `listener` with the allocations each time a newer state generation becomes
  // durable: on the checkpoint writer, after the replies that write acknowledged were handed
  // over (the point at which Admit and Release answer), in generation order, with no engine
  // lock held. Generations may be skipped (one write can make several changes durable). The
  // listener must not block or wait for the engine; it hands the state on. Returns the
  // newest durable state as of the registration, so no change between it and the first
  // call is missed.
  AllocationsWatch WatchAllocations(AllocationsListener listener) ABSL_LOCKS_EXCLUDED(watch_mu_);
  // Unregisters a listener. A call to it already under way may finish after this returns.
  void StopWatchingAllocations(uint64_t id) ABSL_LOCKS_EXCLUDED(watch_mu_);
  // The newest durable state: what Admit and Release have acknowledged, and no more.
  DurableAllocations DurableAllocationsNow() const ABSL_LOCKS_EXCLUDED(watch_mu_);

  EngineStatus Status() const;
  EngineUsage Usage() const;
  std::shared_ptr<const config::Config> config() const;
  std::shared_ptr<const topology::Topology> topology() const;
  std::shared_ptr<const admission::NodePolicy> policy() const;
  // EngineStatus::healthy, with the engine mutex taken: the daemon feeds systemd's watchdog
  // only while this holds.
  bool Healthy() const;

  // Applies a re-read configuration: live keys take effect, restart-only changes are
  // refused and recorded, and a file that failed to load keeps the old configuration.
  // A changed reconcilePeriod counts from the reload, not from the last pass.
  ReloadRecord Reload(const absl::StatusOr<config::Config>& next);

  // One reconcile pass: repair cpuset drift, release containers whose cgroup has been gone
  // longer than cgroup.releaseGracePeriod. `now` is injectable for tests.
  void ReconcileOnce(std::chrono::steady_clock::time_point now);
  // Runs ReconcileOnce every reconcilePeriod on a thread until StopReconcileLoop().
  void StartReconcileLoop();
  void StopReconcileLoop();

  // Makes everything applied so far durable (the final checkpoint at shutdown), and returns
  // once the watchers have been handed the state that write made durable.
  absl::Status Flush();

 private:
  Engine(EngineOptions options, ledger::Ledger ledger, state::CheckpointStore store);
  // On the writer, after a successful write: makes the state it wrote the durable one and
  // tells the watchers.
  void PublishDurable() ABSL_LOCKS_EXCLUDED(watch_mu_);
  // `current` is the configuration in force (reload_mu_ held keeps it so).
  ReloadRecord ApplyReload(const absl::StatusOr<config::Config>& next,
                           const config::Config& current) ABSL_LOCKS_EXCLUDED(mu_)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  absl::StatusOr<uint64_t> WriteSnapshot();
  // Once `generation` is durable, brings the cgroups in line and calls `done` (UNAVAILABLE
  // when the checkpoint could not be written).
  void CommitAsync(uint64_t generation, std::function<void(const absl::Status&)> done);
  void Enforce() ABSL_LOCKS_EXCLUDED(enforce_mu_, mu_);

  // Logs the cgroups of `found` not constrained at the previous reconcile, and those no longer
  // constrained.
  void LogConstrained(const std::vector<cgroup::ConstrainedCgroup>& found)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(enforce_mu_);
  // Why the engine is not acknowledging changes, from the writer's counters; empty if it is.
  std::string HealthProblem(const GroupCommitter::Stats& written,
                            std::chrono::steady_clock::time_point now) const;

  const os::Clock& clock_;
  const std::chrono::steady_clock::time_point started_;
  const std::string instance_;
  const std::chrono::milliseconds stalled_write_after_;
  const std::shared_ptr<const topology::Topology> topology_;
  std::function<void(const std::string&)> log_;
  std::function<void(const std::string&)> log_warning_;
  std::function<void(const std::string&)> log_error_;
  EngineEvents* const events_;

  // Lock order: enforce_mu_ and loop_mu_ are taken before mu_, never while holding it.
  mutable absl::Mutex mu_;
  std::shared_ptr<const config::Config> config_ ABSL_GUARDED_BY(mu_);
  ledger::Ledger ledger_ ABSL_GUARDED_BY(mu_);
  std::optional<ReloadRecord> last_reload_ ABSL_GUARDED_BY(mu_);

  state::CheckpointStore store_;  // used by the GroupCommitter's writer only
  // The last snapshot written and the pools it was taken with, until PublishDurable turns it
  // into the watchers' view (after the writes' callers have their answers). Writer thread only.
  struct Written {
    state::State snapshot;
    CpuSet reserved;
    CpuSet shared_pool;
  };
  std::optional<Written> written_;

  // Guards only the watchers' bookkeeping; nothing is called while holding it, and it is
  // taken after mu_ when both are held.
  mutable absl::Mutex watch_mu_ ABSL_ACQUIRED_AFTER(mu_);
  DurableAllocations durable_ ABSL_GUARDED_BY(watch_mu_);
  std::map<uint64_t, std::shared_ptr<const AllocationsListener>> listeners_
      ABSL_GUARDED_BY(watch_mu_);
  uint64_t next_listener_ ABSL_GUARDED_BY(watch_mu_) = 1;
  // Failed writes since the last successful one, so a failing disk is logged once when it
  // starts and once when it recovers, not at every write. Writer thread only.
  uint64_t failing_since_ok_ = 0;

  absl::Mutex enforce_mu_;  // orders snapshot+apply so the newest state is applied last
  // Serialised internally; set once, so no lock of the engine guards it.
  std::unique_ptr<CpusetEnforcer> enforcer_;
  // Cgroups the last reconcile found constrained (cgroup::ConstrainedCgroup), so each is
  // logged when it becomes so and when it recovers.
  std::set<std::string> constrained_ ABSL_GUARDED_BY(enforce_mu_);
  // The state generation last written to the cgroups; set under enforce_mu_ as well, so the
  // newest generation is the one applied last.
  std::optional<uint64_t> enforced_generation_ ABSL_GUARDED_BY(mu_);

  absl::Mutex loop_mu_;
  // One reload at a time: each decides against the configuration the one before left.
  absl::Mutex reload_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::CondVar loop_cv_;
  bool loop_stop_ ABSL_GUARDED_BY(loop_mu_) = false;
  // A reload changed reconcilePeriod; the loop starts its wait afresh.
  bool loop_period_changed_ ABSL_GUARDED_BY(loop_mu_) = false;
  std::thread loop_;

  // Last, so it is destroyed first: its destructor finishes the waiters still pending, whose
  // completions use the members above.
  GroupCommitter committer_;
};

}  // namespace topologyd::engine
