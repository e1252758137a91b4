// Keeps the node's NodeResourceTopology object current in one file (config `nrt.file`), for a
// node-local publisher (`kubectl apply -f`, a sidecar): rewritten after every change the
// engine has made durable, and after a reload, from the engine's durable allocations.
//
// Off the admission path: the engine's watch only hands the newest state over and wakes the
// publisher's own thread, which builds and writes. Writes are coalesced (at most one per
// `min_interval`) and atomic (a temporary file in the same directory, fsync, rename, fsync of
// the directory), so a reader sees the old object or the new one, never a torn one. A failed
// write is logged (once until one succeeds) and retried after `retry_after`; it never stops
// the daemon. The file is YAML, or JSON when its name ends in ".json".
//
// Thread-safety: Refresh() may be called from any thread; Start/Stop from one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/engine/engine.h"

namespace topologyd::nrt {

struct NrtFilePublisherOptions {
  std::string path;                  // absolute
  engine::Engine* engine = nullptr;  // must outlive the publisher
  std::chrono::milliseconds min_interval{250};
  std::chrono::milliseconds retry_after{std::chrono::seconds(2)};
  std::function<void(const std::string&)> log_info;
  std::function<void(const std::string&)> log_error;
};

class NrtFilePublisher {
 public:
  // Creates the file's directory when missing (mkdir -p, 0755), writes the file once and
  // starts watching. An error (the directory cannot be made, the first write fails) stops
  // start-up: the path is wrong, not a passing problem.
  static absl::StatusOr<std::unique_ptr<NrtFilePublisher>> Start(NrtFilePublisherOptions options);
  ~NrtFilePublisher();  // Stop()

  // Asks for a rewrite from the current durable state (after a reload).
  void Refresh();
  // Stops watching and joins the thread; a pending change is written first.
  void Stop();

  uint64_t writes() const;  // successful writes, the first included

 private:
  // What the engine's listener hands over. Shared with the listener, which may still be
  // running when the publisher is gone (StopWatchingAllocations does not wait for a call
  // under way).
  struct Inbox {
    void Hand(engine::DurableAllocations allocations) ABSL_LOCKS_EXCLUDED(mu);
    absl::Mutex mu;
    absl::CondVar wake;
    engine::DurableAllocations latest ABSL_GUARDED_BY(mu);
    bool dirty ABSL_GUARDED_BY(mu) = false;
    bool stopping ABSL_GUARDED_BY(mu) = false;
    uint64_t writes ABSL_GUARDED_BY(mu) = 0;
  };

  explicit NrtFilePublisher(NrtFilePublisherOptions options);
  void Run();
  absl::Status WriteNow(const engine::DurableAllocations& allocations);

  const NrtFilePublisherOptions options_;
  const std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  uint64_t watch_id_ = 0;
  std::thread thread_;
};

// What would stop Start() from making the directory of `path`, checked without changing
// anything (for `topologyd --check-config`): the directory, or its nearest existing ancestor,
// is not a directory. Empty when nothing is in the way.
std::string NrtFileDirectoryProblem(const std::string& path);

// Writes `contents` to `path` atomically (temporary file beside it, fsync, rename, directory
// fsync). The error names the path and the call that failed.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace topologyd::nrt
