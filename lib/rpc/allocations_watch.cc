#include "lib/rpc/allocations_watch.h"

#include <utility>

#include "lib/rpc/admission_proto.h"

namespace topologyd::rpc {

AllocationsWatch::AllocationsWatch(engine::Engine* engine, Options options)
    : engine_(engine), options_(std::move(options)) {}

AllocationsWatch* AllocationsWatch::Refuse(grpc::Status status, std::function<void()> on_done) {
  std::shared_ptr<AllocationsWatch> watch(
      new AllocationsWatch(nullptr, Options{.check_peer = nullptr, .on_done = std::move(on_done)}));
  watch->self_ = watch;
  watch->End(std::move(status));
  return watch.get();
}

std::shared_ptr<AllocationsWatch> AllocationsWatch::Create(engine::Engine* engine,
                                                           Options options) {
  std::shared_ptr<AllocationsWatch> watch(new AllocationsWatch(engine, std::move(options)));
  watch->self_ = watch;
  return watch;
}

void AllocationsWatch::Begin() {
  std::weak_ptr<AllocationsWatch> weak = weak_from_this();
  engine::AllocationsWatch subscribed =
      engine_->WatchAllocations([weak](engine::DurableAllocations state) {
        if (std::shared_ptr<AllocationsWatch> watch = weak.lock()) watch->Offer(std::move(state));
      });
  bool ended;
  {
    absl::MutexLock lock(&mu_);
    listener_ = subscribed.id;
    ended = finished_;
  }
  // Ended before it began (the daemon stopping): OnDone may have run without the id.
  if (ended) engine_->StopWatchingAllocations(subscribed.id);
  Offer(std::move(subscribed.current));
}

void AllocationsWatch::Offer(engine::DurableAllocations state) {
  {
    absl::MutexLock lock(&mu_);
    if (newest_ && newest_->state.generation >= state->state.generation) return;
    newest_ = std::move(state);
  }
  Pump();
}

void AllocationsWatch::End(grpc::Status status) {
  {
    absl::MutexLock lock(&mu_);
    if (!end_) end_ = std::move(status);
  }
  Pump();
}

void AllocationsWatch::Pump() {
  // Whoever calls holds a reference (gRPC's until OnDone, or the caller's own); this one keeps
  // the object for the rest of the call should OnDone run inline in Finish.
  std::shared_ptr<AllocationsWatch> keep = shared_from_this();
  const topologyd::v1::ListAllocationsResponse* write = nullptr;
  std::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    if (finished_ || writing_) return;  // OnWriteDone pumps again
    if (!end_ && newest_ && (!sent_ || *sent_ < newest_->state.generation) && options_.check_peer) {
      if (grpc::Status allowed = options_.check_peer(); !allowed.ok()) end_ = allowed;
    }
    if (end_) {
      finished_ = true;
      finish = *end_;
    } else if (newest_ && (!sent_ || *sent_ < newest_->state.generation)) {
      message_.Clear();
      AllocationsToProto(*newest_, engine_->config()->feature_gates, &message_);
      sent_ = newest_->state.generation;
      writing_ = true;
      write = &message_;
    }
  }
  if (write != nullptr) StartWrite(write);
  if (finish) Finish(*std::move(finish));
}

void AllocationsWatch::OnWriteDone(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    // The stream is broken (the client went away); it still must be finished.
    if (!ok && !end_) end_ = grpc::Status(grpc::StatusCode::CANCELLED, "the stream was broken");
  }
  Pump();
}

void AllocationsWatch::OnCancel() {
  End(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
}

void AllocationsWatch::OnDone() {
  uint64_t listener;
  {
    absl::MutexLock lock(&mu_);
    listener = std::exchange(listener_, 0);
  }
  if (listener != 0) engine_->StopWatchingAllocations(listener);
  if (options_.on_done) options_.on_done();
  self_.reset();  // may destroy this: nothing after it
}

}  // namespace topologyd::rpc
