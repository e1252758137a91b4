#include "lib/nrt_api/nrt_api_publisher.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/nrt/node_name.h"
#include "lib/nrt/node_resource_topology.h"
#include "lib/nrt/nrt_json.h"

namespace topologyd::nrt_api {
namespace {

using std::chrono::milliseconds;

std::string SecondsText(milliseconds d) {
  return d < std::chrono::seconds(1) ? fmt::format("{} ms", d.count())
                                     : fmt::format("{} s", d.count() / 1000);
}

// Triggers that re-read the Node's uid and apply even an unchanged object.
bool IsFullSync(const std::string& trigger) {
  return trigger == "start-up" || trigger == "resync" || trigger == "retry";
}

}  // namespace

NrtApiPublisher::NrtApiPublisher(NrtApiPublisherOptions options) : options_(std::move(options)) {}

std::unique_ptr<NrtApiPublisher> NrtApiPublisher::Start(NrtApiPublisherOptions options) {
  std::unique_ptr<NrtApiPublisher> p(new NrtApiPublisher(std::move(options)));
  std::shared_ptr<Shared> shared = p->shared_;
  engine::AllocationsWatch watch = p->options_.engine->WatchAllocations(
      [shared](engine::DurableAllocations allocations) { shared->Hand(std::move(allocations)); });
  p->watch_id_ = watch.id;
  {
    absl::MutexLock lock(&shared->mu);
    if (shared->latest == nullptr) shared->latest = watch.current;
    shared->status.server = p->options_.server;
  }
  NrtApiPublisher* raw = p.get();
  p->thread_ = std::thread([raw] { raw->Run(); });
  return p;
}

NrtApiPublisher::~NrtApiPublisher() { Stop(); }

void NrtApiPublisher::Shared::Hand(engine::DurableAllocations allocations) {
  absl::MutexLock lock(&mu);
  // Generations come in order; keep the newest.
  if (latest == nullptr || allocations->state.generation >= latest->state.generation) {
    latest = std::move(allocations);
  }
  if (!dirty) first_pending = Clock::now();
  dirty = true;
  wake.SignalAll();
}

void NrtApiPublisher::Refresh() {
  absl::MutexLock lock(&shared_->mu);
  if (!shared_->dirty) shared_->first_pending = Clock::now();
  shared_->dirty = true;
  shared_->refresh = true;
  shared_->wake.SignalAll();
}

void NrtApiPublisher::Stop() {
  if (!thread_.joinable()) return;
  options_.engine->StopWatchingAllocations(watch_id_);
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->stopping = true;
    shared_->wake.SignalAll();
  }
  thread_.join();
}

NrtApiPublishStatus NrtApiPublisher::Status() const {
  absl::MutexLock lock(&shared_->mu);
  return shared_->status;
}

bool NrtApiPublisher::WaitForPublishes(uint64_t count, milliseconds timeout) const {
  const Clock::time_point deadline = Clock::now() + timeout;
  absl::MutexLock lock(&shared_->mu);
  while (shared_->status.publishes < count && Clock::now() < deadline) {
    shared_->wake.WaitWithTimeout(&shared_->mu, absl::FromChrono(deadline - Clock::now()));
  }
  return shared_->status.publishes >= count;
}

bool NrtApiPublisher::WaitForAttempts(uint64_t count, milliseconds timeout) const {
  const Clock::time_point deadline = Clock::now() + timeout;
  absl::MutexLock lock(&shared_->mu);
  while (shared_->attempts < count && Clock::now() < deadline) {
    shared_->wake.WaitWithTimeout(&shared_->mu, absl::FromChrono(deadline - Clock::now()));
  }
  return shared_->attempts >= count;
}

milliseconds NrtApiPublisher::RetryDelay(uint64_t failures) const {
  milliseconds delay = options_.first_retry;
  for (uint64_t i = 1; i < failures && delay < options_.max_retry; ++i) delay *= 2;
  return std::min(delay, options_.max_retry);
}

bool NrtApiPublisher::NextAttempt(std::string* trigger, engine::DurableAllocations* allocations,
                                  Clock::time_point* since) {
  Shared& s = *shared_;
  absl::MutexLock lock(&s.mu);
  auto take = [&](std::string name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    *trigger = std::move(name);
    *allocations = s.latest;
    *since = s.dirty ? s.first_pending : Clock::now();
    s.dirty = false;
    s.refresh = false;
    return true;
  };
  if (s.attempts == 0) return take("start-up");
  while (true) {
    const Clock::time_point now = Clock::now();
    const uint64_t failures = s.status.consecutive_failures;
    if (s.stopping) {
      // The last answered change reaches the API server, unless it is failing anyway.
      return s.dirty && failures == 0 ? take("stop") : false;
    }
    Clock::time_point due;
    if (failures > 0) {
      due = s.last_attempt_end + RetryDelay(failures);
      if (now >= due) return take("retry");
    } else if (s.dirty) {
      // Coalesce: changes arriving within min_interval of the last apply share the next one.
      due = s.last_attempt_end + options_.min_interval;
      if (now >= due) return take(s.refresh ? "reload" : "change");
    } else {
      due = s.last_attempt_end + options_.resync_period;
      if (now >= due) return take("resync");
    }
    s.wake.WaitWithTimeout(&s.mu, absl::FromChrono(due - now));
  }
}

absl::StatusOr<std::string> NrtApiPublisher::BuildObject(
    const engine::DurableAllocations& allocations, const std::string& node, bool read_node_uid) {
  if (read_node_uid || !node_uid_ || uid_of_node_ != node) {
    node_uid_.reset();
    absl::StatusOr<std::string> uid = options_.transport->NodeUid(node);
    if (!uid.ok()) return uid.status();
    node_uid_ = *std::move(uid);
    uid_of_node_ = node;
  }
  std::shared_ptr<const admission::NodePolicy> policy = options_.engine->policy();
  return nrt::ToApplyJson(nrt::BuildNodeResourceTopology(*policy, allocations->state, node),
                          *node_uid_)
      .dump();
}

void NrtApiPublisher::PublishOnce(const engine::DurableAllocations& allocations,
                                  Clock::time_point since, const std::string& trigger) {
  const std::string node = nrt::NodeName(options_.engine->config()->nrt.node_name);
  absl::StatusOr<std::string> object = BuildObject(allocations, node, IsFullSync(trigger));
  bool unchanged = false;
  absl::Status applied = object.status();
  if (object.ok()) {
    unchanged = !IsFullSync(trigger) && *object == last_applied_;
    if (!unchanged) applied = options_.transport->Apply(node, *object);
  }
  if (applied.ok() && object.ok()) {
    last_applied_ = *std::move(object);
  } else {
    // Read the Node again next time: a Node deleted and created anew explains some failures.
    node_uid_.reset();
    last_applied_.clear();
  }
  const Clock::time_point end = Clock::now();

  NrtApiPublishStatus next;
  {
    absl::MutexLock lock(&shared_->mu);
    next = shared_->status;
  }
  const uint64_t failures_before = next.consecutive_failures;
  if (!unchanged) {
    next.node_name = node;
    next.last_attempt_time = std::chrono::system_clock::now();
    next.last_trigger = trigger;
    next.last_ok = applied.ok();
    next.last_error = applied.ok() ? "" : std::string(applied.message());
    if (applied.ok()) {
      ++next.publishes;
      next.consecutive_failures = 0;
      next.last_success_time = next.last_attempt_time;
      next.published_generation = allocations->state.generation;
      next.last_delay = std::chrono::duration_cast<std::chrono::microseconds>(end - since);
    } else {
      ++next.failed_publishes;
      ++next.consecutive_failures;
    }
    Report(next, failures_before, trigger);
  }
  // Counted after the log lines: a waiter sees both.
  absl::MutexLock lock(&shared_->mu);
  shared_->status = std::move(next);
  ++shared_->attempts;
  shared_->last_attempt_end = end;
  shared_->wake.SignalAll();
}

void NrtApiPublisher::Report(const NrtApiPublishStatus& now, uint64_t failures_before,
                             const std::string& trigger) const {
  if (!now.last_ok) {
    // Once per episode: the count and the newest error are in `topoctl status`.
    if (now.consecutive_failures == 1 && options_.log_error) {
      options_.log_error(fmt::format(
          "nrt.apiServer: cannot publish NodeResourceTopology {} to {} ({}): {}; retrying in {}, "
          "further failures are counted in topoctl status",
          now.node_name, options_.server, trigger, now.last_error,
          SecondsText(RetryDelay(now.consecutive_failures))));
    }
    return;
  }
  if (!options_.log_info) return;
  if (failures_before > 0) {
    options_.log_info(fmt::format(
        "nrt.apiServer: publishing NodeResourceTopology {} to {} again "
        "after {} failed attempt{}",
        now.node_name, options_.server, failures_before, failures_before == 1 ? "" : "s"));
  } else if (now.publishes == 1) {
    options_.log_info(fmt::format("nrt.apiServer: published NodeResourceTopology {} to {}",
                                  now.node_name, options_.server));
  }
}

void NrtApiPublisher::Run() {
  std::string trigger;
  engine::DurableAllocations allocations;
  Clock::time_point since;
  while (NextAttempt(&trigger, &allocations, &since)) {
    PublishOnce(allocations, since, trigger);
    if (trigger == "stop") return;
  }
}

}  // namespace topologyd::nrt_api
