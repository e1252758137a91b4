#include "lib/engine/engine.h"

#include <algorithm>
#include <future>
#include <random>
#include <utility>

#include "absl/time/time.h"
#include "fmt/format.h"

#include "lib/cgroup/naming.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"
#include "lib/common/thread_name.h"
#include "lib/config/node_policy_config.h"

namespace topologyd::engine {
namespace {

// The QoS class picks the cgroup parent (kubepods, burstable, besteffort). Pods imported from
// kubelet's device checkpoint alone have none recorded; guessing would pin a path that does
// not exist, which reconcile then takes for a container gone and releases.
absl::StatusOr<cgroup::QosClass> QosOf(const state::PodRecord& pod) {
  if (pod.qos.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "cgroup: the QoS class of pod {} is not known (it was imported from kubelet's device "
        "checkpoint), so its container cgroup cannot be derived; pass the cgroup path",
        pod.uid));
  }
  return cgroup::ParseQosClass(pod.qos);
}

// Runs an asynchronous operation and blocks until it completes.
template <typename T>
absl::StatusOr<T> Await(const std::function<void(Completion<T>)>& start) {
  std::promise<absl::StatusOr<T>> result;
  std::future<absl::StatusOr<T>> ready = result.get_future();
  start([&result](absl::StatusOr<T> r) { result.set_value(std::move(r)); });
  return ready.get();
}

// 128 random bits in hex.
std::string RandomInstance() {
  std::random_device random;
  std::uniform_int_distribution<uint64_t> bits;
  return fmt::format("{:016x}{:016x}", bits(random), bits(random));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> Engine::Start(EngineOptions options) {
  const config::Config& config = *options.config;
  absl::StatusOr<admission::NodePolicy> policy = config::BuildNodePolicy(config, *options.topology);
  if (!policy.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("{}: {}", config.source_file, policy.status().message()));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(state::CheckpointStore store,
                             state::CheckpointStore::Open(options.fs, config.state_dir));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::optional<state::State> loaded, store.Load());
  auto shared_policy = std::make_shared<const admission::NodePolicy>(*std::move(policy));
  TOPOLOGYD_ASSIGN_OR_RETURN(
      ledger::Ledger ledger,
      ledger::Ledger::Restore(std::move(shared_policy), std::move(loaded).value_or(state::State{}),
                              store.path(), config.source_file));
  return std::unique_ptr<Engine>(
      new Engine(std::move(options), std::move(ledger), std::move(store)));
}

Engine::Engine(EngineOptions options, ledger::Ledger ledger, state::CheckpointStore store)
    : clock_(options.clock != nullptr ? *options.clock : os::DefaultClock()),
      started_(clock_.Now()),
      instance_(RandomInstance()),
      stalled_write_after_(options.stalled_write_after),
      topology_(std::move(options.topology)),
      log_(options.log ? std::move(options.log) : [](const std::string&) {}),
      log_warning_(options.log_warning ? std::move(options.log_warning) : log_),
      log_error_(options.log_error ? std::move(options.log_error) : [](const std::string&) {}),
      events_(options.events),
      config_(std::move(options.config)),
      ledger_(std::move(ledger)),
      store_(std::move(store)),
      durable_(std::make_shared<const AllocationsView>(ledger_.List())),
      enforcer_(std::move(options.enforcer)),
      committer_([this] { return WriteSnapshot(); }, ledger_.generation(),
                 GroupCommitter::kDefaultMaxGather, [this] { PublishDurable(); }, &clock_) {
  Enforce();  // bring cgroups in line with the restored state right away
}

Engine::~Engine() { StopReconcileLoop(); }

absl::StatusOr<uint64_t> Engine::WriteSnapshot() {
  state::State snapshot;
  CpuSet reserved;
  CpuSet shared_pool;
  {
    absl::MutexLock lock(&mu_);
    snapshot = ledger_.Snapshot();
    reserved = ledger_.reserved();
    shared_pool = ledger_.shared_pool();
  }
  const auto write_started = clock_.Now();
  absl::Status saved = store_.Save(snapshot);
  if (events_ != nullptr) {
    events_->CheckpointWritten(clock_.Now() - write_started, saved.ok());
  }
  if (!saved.ok()) {
    if (failing_since_ok_++ == 0) {
      log_error_(fmt::format(
          "state checkpoint write failed: {}; changes get UNAVAILABLE (nothing acknowledged) "
          "until a write succeeds; `topoctl status` shows the last error",
          saved.message()));
    }
    return saved;
  }
  if (failing_since_ok_ > 0) {
    log_(fmt::format("state checkpoint writes succeed again, after {} failed",
                     std::exchange(failing_since_ok_, 0)));
  }
  const uint64_t generation = snapshot.generation;
  // Watchers get exactly what is on disk. Their view is built in PublishDurable, off the path
  // of the answers this write releases.
  written_ = Written{std::move(snapshot), std::move(reserved), std::move(shared_pool)};
  return generation;
}

void Engine::PublishDurable() {
  std::optional<Written> written = std::exchange(written_, std::nullopt);
  if (!written) return;
  {
    // A write of nothing new (a retry after a failure already covered) tells no one.
    absl::MutexLock lock(&watch_mu_);
    if (written->snapshot.generation <= durable_->state.generation) return;
  }
  DurableAllocations view = std::make_shared<const AllocationsView>(ledger::ListOf(
      std::move(written->snapshot), std::move(written->reserved), std::move(written->shared_pool)));
  std::vector<std::shared_ptr<const AllocationsListener>> listeners;
  {
    absl::MutexLock lock(&watch_mu_);
    durable_ = view;
    listeners.reserve(listeners_.size());
    for (const auto& [id, listener] : listeners_) listeners.push_back(listener);
  }
  for (const auto& listener : listeners) (*listener)(view);
}

AllocationsWatch Engine::WatchAllocations(AllocationsListener listener) {
  absl::MutexLock lock(&watch_mu_);
  const uint64_t id = next_listener_++;
  listeners_.emplace(id, std::make_shared<const AllocationsListener>(std::move(listener)));
  return AllocationsWatch{.id = id, .current = durable_};
}

DurableAllocations Engine::DurableAllocationsNow() const {
  absl::MutexLock lock(&watch_mu_);
  return durable_;
}

void Engine::StopWatchingAllocations(uint64_t id) {
  std::shared_ptr<const AllocationsListener> gone;  // destroyed after the lock is given up
  absl::MutexLock lock(&watch_mu_);
  if (auto it = listeners_.find(id); it != listeners_.end()) {
    gone = std::move(it->second);
    listeners_.erase(it);
  }
}

void Engine::CommitAsync(uint64_t generation, std::function<void(const absl::Status&)> done) {
  committer_.WhenDurable(generation, [this, done = std::move(done)](const absl::Status& s) {
    if (!s.ok()) {
      return done(absl::UnavailableError(fmt::format(
          "the change is not acknowledged: the state checkpoint could not be written: {}",
          s.message())));
    }
    Enforce();
    done(absl::OkStatus());
  });
}

void Engine::Enforce() {
  if (!enforcer_) return;
  absl::MutexLock enforce_lock(&enforce_mu_);
  std::vector<cgroup::CpusetTarget> targets;
  {
    absl::MutexLock lock(&mu_);
    // Nothing changed since the last write-out (an idempotent Admit, an Allocate repeating
    // its binding): the kernel already holds this state, and drift is reconcile's job.
    if (enforced_generation_ && *enforced_generation_ == ledger_.generation()) return;
    enforced_generation_ = ledger_.generation();
    targets = CpusetEnforcer::DesiredTargets(ledger_.Snapshot(), ledger_.shared_pool());
  }
  enforcer_->Apply(targets);
}

void Engine::AdmitAsync(const pod::Pod& pod, Completion<AdmitReply> done, AnswerWhen when) {
  const auto started = clock_.Now();
  AdmitReply reply;
  AdmissionEvent event;
  absl::Status decided = [&]() -> absl::Status {
    absl::MutexLock lock(&mu_);
    TOPOLOGYD_ASSIGN_OR_RETURN(ledger::AdmitOutcome outcome, ledger_.Admit(pod));
    event.decided = outcome.decided;
    event.policy = outcome.policy;
    event.scope = outcome.scope;
    event.counts = outcome.counts;
    event.containers = outcome.containers.size();
    reply.admitted = outcome.admitted;
    reply.reason = std::move(outcome.reason);
    reply.message = std::move(outcome.message);
    reply.containers = std::move(outcome.containers);
    // Also for an admission that changed nothing: it is acknowledged once what it answers
    // with is durable.
    reply.generation = ledger_.generation();
    return absl::OkStatus();
  }();
  if (!decided.ok()) return done(decided);
  if (events_ != nullptr) {
    event.admitted = reply.admitted;
    event.reason = reply.reason;
    event.duration = clock_.Now() - started;
    events_->AdmissionDecided(event);
  }
  if (!reply.admitted) return done(std::move(reply));  // a refusal changed nothing
  const uint64_t generation = reply.generation;
  if (when == AnswerWhen::kDecided) {
    reply.durable = committer_.durable_generation() >= generation;
    // The cgroups follow once it is written; a failed write is the AwaitDurable's to report.
    if (!reply.durable) CommitAsync(generation, [](const absl::Status&) {});
    return done(std::move(reply));
  }
  CommitAsync(generation,
              [reply = std::move(reply), done = std::move(done)](const absl::Status& s) mutable {
                if (!s.ok()) return done(s);
                done(std::move(reply));
              });
}

void Engine::AwaitDurableAsync(uint64_t generation, Completion<uint64_t> done) {
  uint64_t reached;
  {
    absl::MutexLock lock(&mu_);
    reached = ledger_.generation();
  }
  if (generation > reached) {
    return done(absl::InvalidArgumentError(fmt::format(
        "state generation {} has not been reached (the newest is {})", generation, reached)));
  }
  committer_.WhenDurable(generation, [generation, done = std::move(done)](const absl::Status& s) {
    if (!s.ok()) {
      return done(absl::UnavailableError(fmt::format(
          "state generation {} is not durable: the state checkpoint could not be written: {}",
          generation, s.message())));
    }
    done(generation);
  });
}

absl::StatusOr<AdmitReply> Engine::Admit(const pod::Pod& pod) {
  return Await<AdmitReply>([&](Completion<AdmitReply> done) { AdmitAsync(pod, std::move(done)); });
}

absl::StatusOr<ExplainReply> Engine::Explain(const pod::Pod& pod) const {
  absl::MutexLock lock(&mu_);
  TOPOLOGYD_ASSIGN_OR_RETURN(admission::AdmissionResult result, ledger_.Explain(pod));
  return ExplainReply{.result = std::move(result), .policy = ledger_.policy()};
}

void Engine::AllocateAsync(const std::string& pod_uid, const std::string& container,
                           const std::string& container_id, const std::string& cgroup_path,
                           Completion<state::ContainerRecord> done) {
  state::ContainerRecord view;
  uint64_t generation = 0;
  absl::Status decided = [&]() -> absl::Status {
    absl::MutexLock lock(&mu_);
    // kubelet's naming, from the pod's QoS class and the configured driver and runtime.
    auto derive = [this, &pod_uid, &container_id](const state::PodRecord& pod)
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<std::string> {
      TOPOLOGYD_ASSIGN_OR_RETURN(cgroup::QosClass qos, QosOf(pod));
      absl::StatusOr<std::string> derived = cgroup::ContainerCgroupPath(
          config_->cgroup.driver, qos, pod_uid, container_id, config_->cgroup.runtime);
      if (!derived.ok()) {
        return absl::InvalidArgumentError(fmt::format("cgroup: {}", derived.status().message()));
      }
      return derived;
    };
    TOPOLOGYD_ASSIGN_OR_RETURN(view,
                               ledger_.Bind(pod_uid, container, container_id, cgroup_path, derive));
    generation = ledger_.generation();
    return absl::OkStatus();
  }();
  if (!decided.ok()) return done(decided);
  CommitAsync(generation,
              [view = std::move(view), done = std::move(done)](const absl::Status& s) mutable {
                if (!s.ok()) return done(s);
                done(std::move(view));
              });
}

absl::StatusOr<state::ContainerRecord> Engine::Allocate(const std::string& pod_uid,
                                                        const std::string& container,
                                                        const std::string& container_id,
                                                        const std::string& cgroup_path) {
  return Await<state::ContainerRecord>([&](Completion<state::ContainerRecord> done) {
    AllocateAsync(pod_uid, container, container_id, cgroup_path, std::move(done));
  });
}

void Engine::ReleaseAsync(const std::string& pod_uid, const std::optional<std::string>& container,
                          Completion<uint64_t> done) {
  ReleaseAsync(pod_uid, container, nullptr, std::move(done));
}

void Engine::ReleaseAsync(const std::string& pod_uid, const std::optional<std::string>& container,
                          const ledger::ReleaseGuard* guard, Completion<uint64_t> done) {
  uint64_t generation = 0;
  absl::Status decided = [&]() -> absl::Status {
    absl::MutexLock lock(&mu_);
    TOPOLOGYD_RETURN_IF_ERROR(ledger_.Release(pod_uid, container, guard));
    generation = ledger_.generation();
    return absl::OkStatus();
  }();
  if (!decided.ok()) return done(decided);
  CommitAsync(generation, [generation, done = std::move(done)](const absl::Status& s) {
    if (!s.ok()) return done(s);
    done(generation);
  });
}

absl::StatusOr<uint64_t> Engine::Release(const std::string& pod_uid,
                                         const std::optional<std::string>& container,
                                         const ledger::ReleaseGuard* guard) {
  return Await<uint64_t>(
      [&](Completion<uint64_t> done) { ReleaseAsync(pod_uid, container, guard, std::move(done)); });
}

AllocationsView Engine::ListAllocations() const {
  absl::MutexLock lock(&mu_);
  return ledger_.List();
}

std::set<std::string> Engine::HeldContainers(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> names;
  const state::State& records = ledger_.Snapshot();
  if (auto pod = records.pods.find(pod_uid); pod != records.pods.end()) {
    for (const state::ContainerRecord& c : pod->second.containers) names.insert(c.name);
  }
  return names;
}

EngineUsage Engine::Usage() const {
  // The durable view needs only watch_mu_, for a pointer copy: a scrape never waits for, or
  // holds up, an admission.
  const DurableAllocations durable = DurableAllocationsNow();
  EngineUsage usage;
  usage.reserved = durable->reserved;
  usage.shared_pool = durable->shared_pool;
  usage.exclusive_cpus = state::ExclusiveCpus(durable->state);
  usage.per_numa = ledger::PerNumaOf(*topology_, durable->state, durable->reserved);
  return usage;
}

EngineStatus Engine::Status() const {
  EngineStatus status;
  {
    absl::MutexLock lock(&mu_);
    status.uptime = clock_.Now() - started_;
    status.config = config_;
    status.last_reload = last_reload_;
    status.state_generation = ledger_.generation();
    status.admitted_pods = static_cast<uint32_t>(ledger_.pod_count());
  }
  const GroupCommitter::Stats written = committer_.stats();
  const auto now = clock_.Now();
  status.problem = HealthProblem(written, now);
  status.healthy = status.problem.empty();
  status.checkpoint = {.path = store_.path(),
                       .durable_generation = written.durable_generation,
                       .writes = written.writes,
                       .failed_writes = written.failed_writes,
                       .last_batch = written.last_batch,
                       .last_error = std::string(written.last_write.message())};
  if (written.writing_since) status.checkpoint.write_running = now - *written.writing_since;
  if (enforcer_) {
    status.cgroup = enforcer_->counters();
    status.cgroup_version = enforcer_->version_name();
  }
  return status;
}

std::shared_ptr<const config::Config> Engine::config() const {
  absl::MutexLock lock(&mu_);
  return config_;
}

std::shared_ptr<const topology::Topology> Engine::topology() const { return topology_; }

std::shared_ptr<const admission::NodePolicy> Engine::policy() const {
  absl::MutexLock lock(&mu_);
  return ledger_.policy();
}

bool Engine::Healthy() const {
  // Taking the mutex is part of the check: a wedged engine must stop the watchdog pings. The
  // writer does not hold it while writing, so a hung write is judged by its duration.
  absl::MutexLock lock(&mu_);
  return HealthProblem(committer_.stats(), clock_.Now()).empty();
}

std::string Engine::HealthProblem(const GroupCommitter::Stats& written,
                                  std::chrono::steady_clock::time_point now) const {
  if (written.writing_since && now - *written.writing_since > stalled_write_after_) {
    const auto running =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *written.writing_since);
    return fmt::format(
        "a state checkpoint write to {} has not finished after {:.1f} s (the disk or file "
        "system does not complete it)",
        store_.path(), static_cast<double>(running.count()) / 1000.0);
  }
  if (!written.last_write.ok()) {
    return fmt::format("the state checkpoint cannot be written: {}", written.last_write.message());
  }
  return "";
}

ReloadRecord Engine::Reload(const absl::StatusOr<config::Config>& next) {
  absl::MutexLock serialize(&reload_mu_);
  const std::shared_ptr<const config::Config> before = config();
  ReloadRecord record = ApplyReload(next, *before);
  if (events_ != nullptr) {
    events_->Reloaded(!record.error.empty()          ? ReloadOutcome::kRejected
                      : !record.refused_keys.empty() ? ReloadOutcome::kPartial
                                                     : ReloadOutcome::kApplied);
  }
  if (config()->reconcile_period != before->reconcile_period) {
    // After mu_ is released: the loop takes loop_mu_ before mu_ (config()).
    {
      absl::MutexLock lock(&loop_mu_);
      loop_period_changed_ = true;
    }
    loop_cv_.SignalAll();
  }
  return record;
}

ReloadRecord Engine::ApplyReload(const absl::StatusOr<config::Config>& next,
                                 const config::Config& current) {
  ReloadRecord record;
  auto reject = [&](std::string error) {
    record.at = clock_.Now();
    record.error = std::move(error);
    absl::MutexLock lock(&mu_);
    last_reload_ = record;
    return record;
  };
  if (!next.ok()) return reject(std::string(next.status().message()));
  // Everything that can fail is decided before the engine's lock is taken; reloads are
  // serialized (reload_mu_), so `current` stays the configuration in force meanwhile.
  // The file as a whole must be one the daemon could start with (what --check-config says);
  // otherwise it is rejected whole, even where only restart-only keys are wrong.
  if (absl::StatusOr<admission::NodePolicy> whole = config::BuildNodePolicy(*next, *topology_);
      !whole.ok()) {
    return reject(fmt::format("{}: {}", next->source_file, whole.status().message()));
  }
  config::ReloadPlan plan = config::PlanReload(current, *next);
  // The node policy is built from these; when the reload changes one, it is rebuilt.
  std::shared_ptr<const admission::NodePolicy> policy;
  if (plan.effective.devices != current.devices ||
      plan.effective.pod_policy_override != current.pod_policy_override) {
    absl::StatusOr<admission::NodePolicy> rebuilt =
        config::BuildNodePolicy(plan.effective, *topology_);
    if (!rebuilt.ok()) {
      return reject(fmt::format("{}: {}", next->source_file, rebuilt.status().message()));
    }
    policy = std::make_shared<const admission::NodePolicy>(*std::move(rebuilt));
    record.warnings = admission::NodePolicyWarnings(*policy);
  }
  record.ok = plan.refused.empty();
  record.applied_keys = plan.applied;
  record.refused_keys = plan.refused;
  record.at = clock_.Now();
  absl::MutexLock lock(&mu_);
  config_ = std::make_shared<const config::Config>(std::move(plan.effective));
  if (policy != nullptr) ledger_.SetPolicy(std::move(policy));
  last_reload_ = record;
  return record;
}

void Engine::ReconcileOnce(std::chrono::steady_clock::time_point now) {
  if (!enforcer_) return;
  const auto started = clock_.Now();
  // (pod uid, the container as bound when its cgroup was found gone)
  std::vector<std::pair<std::string, state::ContainerRecord>> to_release;
  {
    absl::MutexLock enforce_lock(&enforce_mu_);
    std::vector<cgroup::CpusetTarget> targets;
    std::chrono::milliseconds grace;
    state::State snapshot;
    {
      absl::MutexLock lock(&mu_);
      snapshot = ledger_.Snapshot();
      targets = CpusetEnforcer::DesiredTargets(snapshot, ledger_.shared_pool());
      grace = config_->cgroup.release_grace;
    }
    cgroup::ReconcileReport report = enforcer_->Reconcile(targets, now);
    LogConstrained(report.constrained);
    // The pass itself; releases that follow are changes of their own.
    if (events_ != nullptr) events_->Reconciled(clock_.Now() - started);
    for (const cgroup::GoneCgroup& gone : report.gone) {
      if (now - gone.missing_since < grace) continue;
      for (const auto& [uid, pod] : snapshot.pods) {
        for (const auto& c : pod.containers) {
          if (c.cgroup == gone.cgroup) to_release.emplace_back(uid, c);
        }
      }
    }
  }
  for (const auto& entry : to_release) {
    // Named references, not a structured binding: C++20 lets lambdas capture bindings, but
    // clang before 16 refuses it.
    const std::string& uid = entry.first;
    const auto& bound = entry.second;
    const ledger::ReleaseGuard still_bound{.container_id = bound.container_id,
                                           .cgroup = bound.cgroup};
    absl::StatusOr<uint64_t> released = Release(uid, bound.name, &still_bound);
    const std::string& name = bound.name;
    if (released.ok()) {
      // A cgroup that never existed (a path given to Allocate by hand) looks the same as one
      // whose container exited: say so, since the pod loses its CPUs either way.
      log_warning_(fmt::format(
          "released pod {} container {}: its cgroup {} (under the cgroup root) does not exist "
          "and has not for longer than cgroup.releaseGracePeriod; topologyd takes that for a "
          "container that is gone. Bind containers to the cgroup they run in",
          uid, name, bound.cgroup));
    } else if (absl::IsAborted(released.status())) {
      log_(fmt::format("kept pod {} container {} whose cgroup {} is gone: {}", uid, name,
                       bound.cgroup, released.status().message()));
    } else {
      log_(fmt::format("could not release pod {} container {} whose cgroup is gone: {}", uid, name,
                       released.status().message()));
    }
  }
}

void Engine::LogConstrained(const std::vector<cgroup::ConstrainedCgroup>& found) {
  // A narrowed parent constrains every container below it: name a few, count the rest.
  constexpr size_t kNamedPerPass = 8;
  std::set<std::string> now;
  size_t fresh = 0;
  for (const cgroup::ConstrainedCgroup& c : found) {
    now.insert(c.cgroup);
    if (constrained_.count(c.cgroup) != 0 || ++fresh > kNamedPerPass) continue;
    std::string effective = fmt::format("CPUs {}", c.effective_cpus.ToString());
    std::string assigned = fmt::format("CPUs {}", c.cpus.ToString());
    if (c.mems && c.effective_mems && !c.mems->IsSubsetOf(*c.effective_mems)) {
      effective += fmt::format(" and memory nodes {}", c.effective_mems->ToString());
      assigned += fmt::format(" and memory nodes {}", c.mems->ToString());
    }
    log_error_(fmt::format(
        "cgroup {} holds its assigned {}, but the kernel gives its tasks {} (cpuset.*.effective): "
        "a parent cgroup's cpuset was narrowed, or CPUs went offline or into a cpuset "
        "partition. Rewriting the container's cpuset cannot fix that: restore the parent's "
        "cpuset, or bring the CPUs back online",
        c.cgroup, assigned, effective));
  }
  if (fresh > kNamedPerPass) {
    log_error_(fmt::format("{} more cgroups run on less than their cpuset, as above",
                           fresh - kNamedPerPass));
  }
  size_t recovered = 0;
  for (const std::string& cgroup : constrained_) recovered += now.count(cgroup) == 0 ? 1 : 0;
  if (recovered > 0) {
    log_(fmt::format("{} cgroup(s) no longer run on less than their cpuset ({} still do)",
                     recovered, now.size()));
  }
  constrained_ = std::move(now);
}

void Engine::StartReconcileLoop() {
  if (!enforcer_ || loop_.joinable()) return;
  loop_ = std::thread([this] {
    NameThisThread("tpd-reconcile");
    // Locked and unlocked by hand: the lock is given up around each pass.
    loop_mu_.Lock();
    while (!loop_stop_) {
      std::chrono::milliseconds period = config()->reconcile_period;
      // Timed against the steady clock (absl's deadlines are wall-clock times).
      const auto deadline = clock_.Now() + period;
      bool woken = loop_stop_ || loop_period_changed_;
      while (!woken) {
        const auto left = deadline - clock_.Now();
        if (left <= std::chrono::steady_clock::duration::zero()) break;
        loop_cv_.WaitWithTimeout(&loop_mu_, absl::FromChrono(left));
        woken = loop_stop_ || loop_period_changed_;
      }
      if (woken) {
        if (loop_stop_) break;
        // A reload changed the period: the new one counts from the reload.
        loop_period_changed_ = false;
        continue;
      }
      loop_mu_.Unlock();
      ReconcileOnce(clock_.Now());
      loop_mu_.Lock();
    }
    loop_mu_.Unlock();
  });
}

void Engine::StopReconcileLoop() {
  {
    absl::MutexLock lock(&loop_mu_);
    loop_stop_ = true;
  }
  loop_cv_.SignalAll();
  if (loop_.joinable()) loop_.join();
}

absl::Status Engine::Flush() {
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    generation = ledger_.generation();
  }
  return committer_.WaitWritten(generation);
}

}  // namespace topologyd::engine
