// Easy handles kept between a client's requests, so that the next request reuses the open
// connection (and TLS session) of an earlier one instead of a new TCP and TLS handshake, as
// client-go's transport does: curl keeps a handle's connections after its transfer.
// Thread-safe: a handle is lent to one transfer at a time, and concurrent transfers get handles
// (and connections) of their own.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/curl_easy/curl_easy.h"

namespace topologyd::curl_easy {

class HandlePool;

// A handle lent by a HandlePool; given back when destroyed, its options reset (so no pointer
// the transfer set outlives it) and its connections kept. Declare it before the buffers its
// options point to: they are then destroyed first, and no transfer runs in between.
class PooledHandle {
 public:
  PooledHandle(PooledHandle&&) = default;
  PooledHandle& operator=(PooledHandle&&) = delete;
  ~PooledHandle();

  CURL* get() const { return handle_.get(); }

 private:
  friend class HandlePool;
  PooledHandle(std::shared_ptr<HandlePool> pool, Handle handle)
      : pool_(std::move(pool)), handle_(std::move(handle)) {}

  std::shared_ptr<HandlePool> pool_;
  Handle handle_;
};

class HandlePool : public std::enable_shared_from_this<HandlePool> {
 public:
  // At most `max_idle` handles wait between requests; one given back beyond that is closed with
  // its connections (more only ever help a client that sends that many requests at once).
  static std::shared_ptr<HandlePool> Create(size_t max_idle = 4);

  // An idle handle, else a new one (RESOURCE_EXHAUSTED when curl has none).
  absl::StatusOr<PooledHandle> Acquire();

  size_t idle() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class PooledHandle;
  explicit HandlePool(size_t max_idle) : max_idle_(max_idle) {}
  void GiveBack(Handle handle) ABSL_LOCKS_EXCLUDED(mu_);

  const size_t max_idle_;
  mutable absl::Mutex mu_;
  std::vector<Handle> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::curl_easy
