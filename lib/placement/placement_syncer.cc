#include "lib/placement/placement_syncer.h"

#include <algorithm>
#include <random>

#include "fmt/format.h"

#include "lib/placement/placement_http.h"

namespace topologyd::placement {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCallTimeout{std::chrono::seconds(10)};

// Refuses every call once the syncer stops, so that a sync in progress ends after the call
// under way instead of going through the rest of its plan.
class StoppableTransport : public PlacementTransport {
 public:
  StoppableTransport(PlacementTransport& inner, const std::atomic<bool>& cancel)
      : inner_(inner), cancel_(cancel) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request,
                                    const std::string& microversion) override {
    if (cancel_.load()) return absl::CancelledError("topologyd is stopping");
    return inner_.Send(request, microversion);
  }

 private:
  PlacementTransport& inner_;
  const std::atomic<bool>& cancel_;
};

absl::StatusOr<std::unique_ptr<PlacementTransport>> CurlTransport(const SyncTarget& target,
                                                                  const std::atomic<bool>* cancel) {
  absl::StatusOr<CurlPlacementTransport> curl =
      CurlPlacementTransport::Create({.url = target.url,
                                      .token = target.token,
                                      .timeout = kCallTimeout,
                                      .tls = target.tls,
                                      .cancel = cancel});
  if (!curl.ok()) return curl.status();
  return std::make_unique<CurlPlacementTransport>(*std::move(curl));
}

std::string SecondsText(milliseconds d) {
  return fmt::format("{}s", std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

// The first error of a report, and how many more there were.
std::string ReportError(const SyncReport& report) {
  std::string text = report.errors.front();
  if (report.errors.size() > 1) text += fmt::format(" (and {} more)", report.errors.size() - 1);
  return text;
}

}  // namespace

PlacementSyncer::PlacementSyncer(PlacementSyncerOptions options) : options_(std::move(options)) {}

std::unique_ptr<PlacementSyncer> PlacementSyncer::Start(PlacementSyncerOptions options) {
  if (!options.transport) options.transport = CurlTransport;
  std::unique_ptr<PlacementSyncer> syncer(new PlacementSyncer(std::move(options)));
  PlacementSyncer* raw = syncer.get();
  syncer->thread_ = std::thread([raw] { raw->Run(); });
  return syncer;
}

PlacementSyncer::~PlacementSyncer() { Stop(); }

void PlacementSyncer::Refresh() {
  absl::MutexLock lock(&mu_);
  refresh_ = true;
  wake_.SignalAll();
}

void PlacementSyncer::Stop() {
  if (!thread_.joinable()) return;
  cancel_.store(true);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  thread_.join();
}

PlacementSyncStatus PlacementSyncer::Status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

bool PlacementSyncer::WaitForSyncs(uint64_t count, milliseconds timeout) const {
  const Clock::time_point deadline = Clock::now() + timeout;
  absl::MutexLock lock(&mu_);
  while (status_.syncs < count && Clock::now() < deadline) {
    wake_.WaitWithTimeout(&mu_, absl::FromChrono(deadline - Clock::now()));
  }
  return status_.syncs >= count;
}

milliseconds PlacementSyncer::RetryDelay(uint64_t failures) const {
  milliseconds delay = options_.first_retry;
  const milliseconds period = options_.period();
  for (uint64_t i = 1; i < failures && delay < period; ++i) delay *= 2;
  return std::min(delay, period);
}

void PlacementSyncer::WaitBeforeRetry(int attempt) {
  thread_local std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<int> jitter(50, 150);
  const Clock::time_point until = Clock::now() + milliseconds(jitter(random) * attempt);
  absl::MutexLock lock(&mu_);
  while (!stopping_ && Clock::now() < until) {
    wake_.WaitWithTimeout(&mu_, absl::FromChrono(until - Clock::now()));
  }
}

void PlacementSyncer::SyncOnce(const absl::StatusOr<SyncTarget>& target,
                               const std::string& trigger) {
  std::string error;
  std::optional<SyncReport> report;
  if (!target.ok()) {
    error = std::string(target.status().message());
  } else {
    absl::StatusOr<std::unique_ptr<PlacementTransport>> transport =
        options_.transport(*target, &cancel_);
    if (!transport.ok()) {
      error = std::string(transport.status().message());
    } else {
      StoppableTransport stoppable(**transport, cancel_);
      SyncOptions sync_options;
      sync_options.wait_before_retry = [this](int attempt) { WaitBeforeRetry(attempt); };
      absl::StatusOr<SyncReport> done = SyncProviderTree(stoppable, target->tree, sync_options);
      if (!done.ok()) {
        error = std::string(done.status().message());
      } else {
        report = *std::move(done);
        if (!report->ok()) error = ReportError(*report);
      }
    }
  }
  if (cancel_.load()) return;  // stopping: the outcome of a cut-short sync is no news

  uint64_t failures = 0;
  bool recovered = false;
  {
    absl::MutexLock lock(&mu_);
    PlacementSyncStatus& s = status_;
    if (target.ok()) {
      s.endpoint = target->url;
      s.root_provider_name = target->tree.root().name;
      s.root_provider_uuid = target->tree.root().uuid;
      s.providers = static_cast<uint32_t>(target->tree.providers.size());
    }
    ++s.syncs;
    s.last_sync_time = std::chrono::system_clock::now();
    s.last_trigger = trigger;
    s.last_ok = error.empty();
    s.last_error = error;
    s.microversion = report ? report->microversion : "";
    s.providers_written = report ? static_cast<uint32_t>(report->written.size()) : 0;
    s.providers_deleted = report ? static_cast<uint32_t>(report->deleted) : 0;
    s.providers_kept = report ? static_cast<uint32_t>(report->kept.size()) : 0;
    if (error.empty()) {
      recovered = s.consecutive_failures > 0;
      failures = s.consecutive_failures;
      s.consecutive_failures = 0;
      s.last_success_time = s.last_sync_time;
    } else {
      ++s.failed_syncs;
      failures = ++s.consecutive_failures;
    }
    wake_.SignalAll();
  }

  const std::string where = target.ok() ? target->url : "Placement";
  if (!error.empty()) {
    // Once per episode: the count and the newest error are in `topoctl status`.
    if (failures == 1 && options_.log_error) {
      options_.log_error(
          fmt::format("placement: sync to {} failed ({}): {}; retrying in {}, further failures are "
                      "counted in topoctl status",
                      where, trigger, error, SecondsText(RetryDelay(failures))));
    }
    return;
  }
  if (!options_.log_info) return;
  if (recovered) {
    options_.log_info(
        fmt::format("placement: sync to {} succeeds again after {} failed", where, failures));
  }
  if (report->written.empty() && report->deleted == 0 && report->kept.empty()) {
    if (trigger == "start-up") {
      options_.log_info(fmt::format("placement: the tree of {} ({} providers) is in sync at {}",
                                    target->tree.root().name, target->tree.providers.size(),
                                    where));
    }
    return;
  }
  options_.log_info(fmt::format(
      "placement: synced the tree of {} to {} ({}): {} providers written, {} deleted, {} kept",
      target->tree.root().name, where, trigger, report->written.size(), report->deleted,
      report->kept.size()));
  for (const std::string& kept : report->kept) {
    options_.log_info(fmt::format("placement: kept {}", kept));
  }
}

void PlacementSyncer::Run() {
  std::string trigger = "start-up";
  std::optional<SyncTarget> last;  // the target of the last sync that ran
  Clock::time_point last_end = Clock::now();
  while (true) {
    absl::StatusOr<SyncTarget> target = options_.target();
    // A reload that leaves the tree and the endpoint as they were changes nothing to publish.
    const bool unchanged =
        trigger == "reload" && target.ok() && last.has_value() && *last == *target;
    if (!unchanged) {
      SyncOnce(target, trigger);
      last = target.ok() ? std::optional<SyncTarget>(*target) : std::nullopt;
      last_end = Clock::now();
    }
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    const uint64_t failures = status_.consecutive_failures;
    while (true) {
      // Re-read each time round: a reload may change the period.
      const milliseconds wait = failures > 0 ? RetryDelay(failures) : options_.period();
      const Clock::time_point due = last_end + wait;
      if (stopping_) return;
      if (refresh_) {
        refresh_ = false;
        trigger = "reload";
        break;
      }
      if (Clock::now() >= due) {
        trigger = failures > 0 ? "retry" : "period";
        break;
      }
      wake_.WaitWithTimeout(&mu_, absl::FromChrono(due - Clock::now()));
    }
  }
}

}  // namespace topologyd::placement
