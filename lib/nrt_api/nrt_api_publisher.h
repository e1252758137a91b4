// Keeps the node's NodeResourceTopology object current in the Kubernetes API server (config
// `nrt.apiServer`; docs/cluster.md), where the topology-aware scheduler reads it: the object
// `nrt.file` holds, applied server-side as field manager "topologyd" and owned by the Node of
// the same name, so that it goes when the Node goes.
//
// Off the admission path: the engine's watch only hands the newest durable state over and
// wakes the publisher's own thread, which builds the object and applies it. Changes are
// coalesced (at most one apply per `min_interval`); an object equal to the one last applied is
// not sent again, except on the resync period, which also reads the Node's uid again (a Node
// deleted and registered anew has a new one). A failed apply is retried after `first_retry`,
// doubling up to `max_retry`; it is logged once per episode (and the recovery once), counted in
// Status(), and never stops anything. Stop() publishes a pending change once, bounded by the
// transport's timeout.
//
// Thread-safety: Refresh(), Status() and WaitForPublishes() from any thread; Start/Stop from
// one.
#pragma once

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

#include "lib/engine/engine.h"

namespace topologyd::nrt_api {

inline constexpr std::string_view kFieldManager = "topologyd";

// Where the object goes. Errors name what is wrong in the operator's terms (a missing CRD,
// a missing RBAC verb, a Node not registered): they reach the log and Status() as they are.
class NrtApiTransport {
 public:
  virtual ~NrtApiTransport() = default;
  // The metadata.uid of Node `node`.
  virtual absl::StatusOr<std::string> NodeUid(const std::string& node) = 0;
  // Applies `object` (JSON), the NodeResourceTopology named `name`.
  virtual absl::Status Apply(const std::string& name, const std::string& object) = 0;
};

// What Status() reports (the Status RPC's `nrt_api_server`).
struct NrtApiPublishStatus {
  std::string server;
  std::string node_name;
  uint64_t publishes = 0;  // applies that succeeded
  uint64_t failed_publishes = 0;
  uint64_t consecutive_failures = 0;
  std::optional<std::chrono::system_clock::time_point> last_attempt_time;
  std::optional<std::chrono::system_clock::time_point> last_success_time;
  std::string last_trigger;  // start-up | change | reload | resync | retry | stop
  bool last_ok = false;
  std::string last_error;
  // The state generation the object in the API server shows, after the last success.
  uint64_t published_generation = 0;
  // From the durable change being handed over to its apply ending, for the last success.
  std::chrono::microseconds last_delay{0};
};

struct NrtApiPublisherOptions {
  engine::Engine* engine = nullptr;  // must outlive the publisher
  std::unique_ptr<NrtApiTransport> transport;
  std::string server;  // shown in Status()
  std::chrono::milliseconds resync_period{std::chrono::minutes(1)};
  std::chrono::milliseconds min_interval{50};
  std::chrono::milliseconds first_retry{std::chrono::seconds(1)};
  std::chrono::milliseconds max_retry{std::chrono::minutes(1)};
  std::function<void(const std::string&)> log_info;
  std::function<void(const std::string&)> log_error;
};

class NrtApiPublisher {
 public:
  // Starts watching and the thread, whose first apply begins at once; never waits for the API
  // server.
  static std::unique_ptr<NrtApiPublisher> Start(NrtApiPublisherOptions options);
  ~NrtApiPublisher();  // Stop()

  // Asks for an apply from the current durable state (after a reload: the node name, the
  // policy or the device pools may have changed).
  void Refresh();
  // Stops watching, applies a pending change once (unless failing), joins the thread.
  void Stop();

  NrtApiPublishStatus Status() const;
  // Waits until at least `count` applies have succeeded, or `timeout` passes.
  bool WaitForPublishes(uint64_t count, std::chrono::milliseconds timeout) const;
  // Waits until at least `count` attempts have ended (either way), or `timeout` passes.
  bool WaitForAttempts(uint64_t count, std::chrono::milliseconds timeout) const;

 private:
  using Clock = std::chrono::steady_clock;

  // What the publisher's thread and the engine's listener share. The listener may still be
  // running when the publisher is gone (StopWatchingAllocations does not wait for a call under
  // way), so it holds this, not the publisher.
  struct Shared {
    void Hand(engine::DurableAllocations allocations) ABSL_LOCKS_EXCLUDED(mu);
    mutable absl::Mutex mu;
    mutable absl::CondVar wake;  // a change, Refresh(), Stop(); an attempt ending
    engine::DurableAllocations latest ABSL_GUARDED_BY(mu);
    Clock::time_point first_pending ABSL_GUARDED_BY(mu);  // when the oldest unpublished came
    bool dirty ABSL_GUARDED_BY(mu) = false;
    bool refresh ABSL_GUARDED_BY(mu) = false;
    bool stopping ABSL_GUARDED_BY(mu) = false;
    Clock::time_point last_attempt_end ABSL_GUARDED_BY(mu);
    uint64_t attempts ABSL_GUARDED_BY(mu) = 0;
    NrtApiPublishStatus status ABSL_GUARDED_BY(mu);
  };

  explicit NrtApiPublisher(NrtApiPublisherOptions options);
  void Run();
  // Waits for the next reason to apply and takes the state to apply; false when stopping with
  // nothing left to do.
  bool NextAttempt(std::string* trigger, engine::DurableAllocations* allocations,
                   Clock::time_point* since);
  // One attempt at publishing `allocations`; updates the status and logs.
  void PublishOnce(const engine::DurableAllocations& allocations, Clock::time_point since,
                   const std::string& trigger);
  // The log lines of an attempt that ended as `now` says, after `failures_before` failures.
  void Report(const NrtApiPublishStatus& now, uint64_t failures_before,
              const std::string& trigger) const;
  absl::StatusOr<std::string> BuildObject(const engine::DurableAllocations& allocations,
                                          const std::string& node, bool read_node_uid);
  std::chrono::milliseconds RetryDelay(uint64_t failures) const;

  NrtApiPublisherOptions options_;
  const std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  // Publisher thread only: the Node's uid (for the node named uid_of_node_) and the object
  // last applied.
  std::optional<std::string> node_uid_;
  std::string uid_of_node_;
  std::string last_applied_;
  uint64_t watch_id_ = 0;
  std::thread thread_;
};

}  // namespace topologyd::nrt_api
