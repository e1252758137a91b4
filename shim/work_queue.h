// WorkQueue: a few threads that run the shim's intercepted calls, so that waiting on topologyd
// or the runtime never holds a gRPC callback thread (which pass-through calls need).
//
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace topologyd::shim {

class WorkQueue {
 public:
  explicit WorkQueue(int threads);
  ~WorkQueue();  // Stop()
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Runs `task` on a worker; after Stop() it runs on the caller's thread instead, so every
  // posted call still gets its answer.
  void Post(std::function<void()> task);
  // Runs what is queued, then joins the workers.
  void Stop();

 private:
  void Work();

  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace topologyd::shim
