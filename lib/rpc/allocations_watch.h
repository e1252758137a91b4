// AllocationsWatch: one WatchAllocations stream. It writes the newest durable allocations
// the Engine has told it of, one write at a time; a state that arrives while a write is under
// way replaces the one waiting, so a slow reader gets the newest state, never a backlog.
//
// Lifetime: gRPC may run a reaction inline in the thread that starts a write or the finish,
// and the Engine's writer may offer a state at any time, also after OnDone. So the object is
// owned by shared pointers: one held for gRPC until OnDone, and one by whoever is calling in
// (the Engine's listener holds only a weak one). Nothing of gRPC's is touched after Finish,
// and no lock is held while calling into gRPC.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include <grpcpp/grpcpp.h>

#include "lib/engine/engine.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::rpc {

class AllocationsWatch final
    : public grpc::ServerWriteReactor<topologyd::v1::ListAllocationsResponse>,
      public std::enable_shared_from_this<AllocationsWatch> {
 public:
  struct Options {
    // Checked before every message: a caller no longer allowed (allowedPeers reloaded) gets
    // the error instead, which ends the stream.
    std::function<grpc::Status()> check_peer;
    // Runs in OnDone, once the stream has ended.
    std::function<void()> on_done;
  };

  // A stream that ends at once with `status` (not OK), subscribing to nothing.
  static AllocationsWatch* Refuse(grpc::Status status, std::function<void()> on_done);
  // A stream of `engine`'s durable allocations: the current state, then each newer one.
  // The caller registers the result (see End) before Begin sends anything.
  static std::shared_ptr<AllocationsWatch> Create(engine::Engine* engine, Options options);
  // Subscribes and writes the current state.
  void Begin();

  // Ends the stream with `status` once the write under way, if any, is done.
  void End(grpc::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  void OnWriteDone(bool ok) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnCancel() override ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone() override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  AllocationsWatch(engine::Engine* engine, Options options);
  // A newer durable state (older ones are dropped).
  void Offer(engine::DurableAllocations state) ABSL_LOCKS_EXCLUDED(mu_);
  // Starts the next write, or the finish, when nothing is under way; decides under mu_ and
  // calls gRPC after giving it up.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);

  engine::Engine* const engine_;  // null for a refused stream
  const Options options_;
  // gRPC's reference, dropped in OnDone.
  std::shared_ptr<AllocationsWatch> self_;

  absl::Mutex mu_;
  uint64_t listener_ ABSL_GUARDED_BY(mu_) = 0;  // the Engine's id for our listener; 0 = none
  engine::DurableAllocations newest_ ABSL_GUARDED_BY(mu_);
  std::optional<uint64_t> sent_ ABSL_GUARDED_BY(mu_);  // generation of the last message
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> end_ ABSL_GUARDED_BY(mu_);  // asked to finish with this
  bool finished_ ABSL_GUARDED_BY(mu_) = false;            // Finish was called
  // The message being written; gRPC reads it until OnWriteDone, so it changes only while
  // `writing_` is false.
  topologyd::v1::ListAllocationsResponse message_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::rpc
