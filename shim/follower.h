// Follower: keeps the shim in step with topologyd and the runtime while it runs.
//   - the watch thread follows topologyd's WatchAllocations stream: every change refreshes the
//     allocation cache and pushes changed cpusets (the shared pool) to the runtime;
//     a broken stream is opened again, with a resync once it is back;
//   - the resync thread compares the runtime with topologyd at start, every resync period,
//     and when asked (after a reconnection).
#pragma once

#include <chrono>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include <grpcpp/grpcpp.h>

#include "shim/allocation_cache.h"
#include "shim/grpc_topologyd_client.h"
#include "shim/placement_pusher.h"
#include "shim/runtime_resync.h"

namespace topologyd::shim {

class Follower {
 public:
  Follower(GrpcTopologydClient* topologyd, AllocationCache* cache, RuntimeResync* resync,
           PlacementPusher* pusher, std::chrono::milliseconds resync_period);
  ~Follower();  // Stop()

  void Start();
  void Stop();
  // Asks for a resync soon (after the one running, if any).
  void RequestResync();

 private:
  void Watch();
  void ResyncLoop();
  // Sleeps up to `d`; false when stopping.
  bool Sleep(std::chrono::milliseconds d);

  GrpcTopologydClient* const topologyd_;
  AllocationCache* const cache_;
  RuntimeResync* const resync_;
  PlacementPusher* const pusher_;
  const std::chrono::milliseconds resync_period_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool resync_requested_ ABSL_GUARDED_BY(mu_) = true;  // the first one, at start
  grpc::ClientContext* watch_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread watch_thread_;
  std::thread resync_thread_;
};

}  // namespace topologyd::shim
