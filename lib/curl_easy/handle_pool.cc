#include "lib/curl_easy/handle_pool.h"

#include <utility>

namespace topologyd::curl_easy {

PooledHandle::~PooledHandle() {
  if (handle_ && pool_) pool_->GiveBack(std::move(handle_));
}

std::shared_ptr<HandlePool> HandlePool::Create(size_t max_idle) {
  return std::shared_ptr<HandlePool>(new HandlePool(max_idle));
}

absl::StatusOr<PooledHandle> HandlePool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      Handle handle = std::move(idle_.back());
      idle_.pop_back();
      return PooledHandle(shared_from_this(), std::move(handle));
    }
  }
  absl::StatusOr<Handle> created = NewHandle();
  if (!created.ok()) return created.status();
  return PooledHandle(shared_from_this(), *std::move(created));
}

size_t HandlePool::idle() const {
  absl::MutexLock lock(&mu_);
  return idle_.size();
}

void HandlePool::GiveBack(Handle handle) {
  // Options only: curl_easy_reset keeps the connection cache, the TLS session cache and DNS.
  curl_easy_reset(handle.get());
  absl::MutexLock lock(&mu_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(handle));
  // else `handle` is cleaned up here, closing its connections.
}

}  // namespace topologyd::curl_easy
