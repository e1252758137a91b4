// PlacementSyncer: the daemon's own sync of the node's provider tree into OpenStack Placement
// (config `placement`; docs/placement.md, "The daemon's sync"). It runs SyncProviderTree() on a
// thread of its own: at start-up, after a reload whose tree (or endpoint) differs from the one
// last synced, and every sync period; after a failure sooner (10 s, doubling, at most the
// period).
//
// Off the admission path: the target (tree, endpoint, token) is built from snapshots the
// daemon hands over, and no lock of the engine or of the syncer is held during HTTP. A failed
// sync is logged once per episode (and its recovery once), counted in Status(), and never
// stops anything. Stop() ends a call in progress (the transport gets a cancel flag) and
// returns without waiting for the rest of the sync.
//
// Thread-safety: Refresh(), Status() and WaitForSyncs() from any thread; Start/Stop from one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/curl_easy/curl_easy.h"
#include "lib/placement/provider_tree.h"
#include "lib/placement/sync.h"

namespace topologyd::placement {

// What one sync publishes, and where.
struct SyncTarget {
  ProviderTree tree;
  std::string url;
  std::string token;  // X-Auth-Token; empty = none
  curl_easy::TlsOptions tls;
  friend bool operator==(const SyncTarget&, const SyncTarget&) = default;
};

// What Status() reports (the Status RPC's `placement`).
struct PlacementSyncStatus {
  std::string endpoint;
  std::string root_provider_name;
  std::string root_provider_uuid;
  uint64_t syncs = 0;
  uint64_t failed_syncs = 0;
  uint64_t consecutive_failures = 0;
  std::optional<std::chrono::system_clock::time_point> last_sync_time;
  std::optional<std::chrono::system_clock::time_point> last_success_time;
  std::string last_trigger;  // start-up | reload | period | retry
  bool last_ok = false;
  std::string last_error;
  std::string microversion;
  uint32_t providers = 0;
  uint32_t providers_written = 0;
  uint32_t providers_deleted = 0;
  uint32_t providers_kept = 0;
};

// Makes the transport of one sync; `cancel` turns true when the syncer stops.
using PlacementTransportFactory = std::function<absl::StatusOr<std::unique_ptr<PlacementTransport>>(
    const SyncTarget& target, const std::atomic<bool>* cancel)>;

struct PlacementSyncerOptions {
  // The target now (called on the syncer's thread before each sync); an error is a failed
  // sync (e.g. the token file cannot be read).
  std::function<absl::StatusOr<SyncTarget>()> target;
  // The sync period now (a reload may change it).
  std::function<std::chrono::milliseconds()> period;
  // Empty: CurlPlacementTransport with a 10 s timeout per call.
  PlacementTransportFactory transport;
  // The first retry after a failure; each further failure doubles it, up to the period.
  std::chrono::milliseconds first_retry{std::chrono::seconds(10)};
  std::function<void(const std::string&)> log_info;
  std::function<void(const std::string&)> log_error;
};

class PlacementSyncer {
 public:
  // Starts the thread, whose first sync begins at once; never waits for Placement.
  static std::unique_ptr<PlacementSyncer> Start(PlacementSyncerOptions options);
  ~PlacementSyncer();  // Stop()

  // After a reload: the syncer builds the target again and syncs when it differs from the
  // last one it synced.
  void Refresh();
  // Cancels a call in progress and joins the thread.
  void Stop();

  PlacementSyncStatus Status() const;
  // Waits until at least `count` syncs have ended, or `timeout` passes; true when they have.
  bool WaitForSyncs(uint64_t count, std::chrono::milliseconds timeout) const;

 private:
  explicit PlacementSyncer(PlacementSyncerOptions options);
  void Run();
  // One sync of `target` (or of nothing, when it could not be built); updates the status.
  void SyncOnce(const absl::StatusOr<SyncTarget>& target, const std::string& trigger);
  // The wait before the conflict retry `attempt`, ended early by Stop().
  void WaitBeforeRetry(int attempt);
  std::chrono::milliseconds RetryDelay(uint64_t failures) const;

  const PlacementSyncerOptions options_;
  std::atomic<bool> cancel_{false};
  mutable absl::Mutex mu_;
  mutable absl::CondVar wake_;  // Refresh(), Stop(); syncs ending (for WaitForSyncs)
  bool refresh_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  PlacementSyncStatus status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace topologyd::placement
