#include "shim/follower.h"

#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"

namespace topologyd::shim {

Follower::Follower(GrpcTopologydClient* topologyd, AllocationCache* cache, RuntimeResync* resync,
                   PlacementPusher* pusher, std::chrono::milliseconds resync_period)
    : topologyd_(topologyd),
      cache_(cache),
      resync_(resync),
      pusher_(pusher),
      resync_period_(resync_period) {}

Follower::~Follower() { Stop(); }

void Follower::Start() {
  watch_thread_ = std::thread([this] { Watch(); });
  resync_thread_ = std::thread([this] { ResyncLoop(); });
}

void Follower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
  }
  if (watch_thread_.joinable()) watch_thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

void Follower::RequestResync() {
  absl::MutexLock lock(&mu_);
  resync_requested_ = true;
}

bool Follower::Sleep(std::chrono::milliseconds d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(d));
  return !stopping_;
}

void Follower::Watch() {
  std::chrono::milliseconds backoff(100);
  bool was_connected = true;
  while (true) {
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      watch_context_ = &context;
    }
    auto reader = topologyd_->WatchAllocations(&context);
    v1::ListAllocationsResponse listing;
    bool first = true;
    while (reader->Read(&listing)) {
      cache_->Replace(listing, /*fresh_stream=*/first);
      if (first) {
        if (!was_connected) spdlog::info("topologyd at {} is back", topologyd_->socket_path());
        was_connected = true;
        backoff = std::chrono::milliseconds(100);
        first = false;
        RequestResync();
      }
      pusher_->PushChanged();
    }
    grpc::Status status = reader->Finish();
    {
      absl::MutexLock lock(&mu_);
      watch_context_ = nullptr;
      if (stopping_) return;
    }
    if (was_connected) {
      spdlog::warn("lost topologyd's allocation stream at {}: {}; reconnecting",
                   topologyd_->socket_path(), status.error_message());
    }
    was_connected = false;
    if (!Sleep(backoff)) return;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

void Follower::ResyncLoop() {
  while (true) {
    {
      // Until asked, or the period has passed since the last resync.
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](Follower* f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(f->mu_) {
                                 return f->stopping_ || f->resync_requested_;
                               },
                               this),
                           absl::FromChrono(resync_period_));
      if (stopping_) return;
      resync_requested_ = false;
    }
    absl::Status status = resync_->Run();
    if (!status.ok()) spdlog::warn("resync incomplete: {}", status.message());
  }
}

}  // namespace topologyd::shim
