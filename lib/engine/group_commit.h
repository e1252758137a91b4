// GroupCommitter: makes state changes durable in batches. Each change gets a generation
// number when it is applied in memory; a caller that must not reply before its change is on
// disk calls WaitDurable(generation). One caller at a time writes a snapshot of the newest
// state (which contains every change applied so far); callers whose generation that write
// covers return without writing themselves. Under concurrency one fsync serves many
// admissions; alone, each change costs one write, as it must.
//
// A failed write fails the caller that attempted it; the next waiter tries again, so a
// transient error costs retries, never an acknowledged-but-lost change.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::engine {

class GroupCommitter {
 public:
  // `write_snapshot` writes the current state durably and returns the generation it wrote.
  // It is called by one thread at a time, without any GroupCommitter lock held.
  explicit GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                          uint64_t durable_generation = 0);

  // Blocks until `generation` is durable, writing it if no other caller is. The error of
  // the write this caller attempted, if it failed.
  absl::Status WaitDurable(uint64_t generation);

  uint64_t durable_generation() const;
  uint64_t writes() const;
  // The last write's result (OK before the first write).
  absl::Status last_write_status() const;

 private:
  std::function<absl::StatusOr<uint64_t>()> write_snapshot_;
  mutable std::mutex mu_;
  std::condition_variable written_;
  uint64_t durable_ = 0;      // guarded by mu_
  bool writing_ = false;      // guarded by mu_
  uint64_t writes_ = 0;       // guarded by mu_
  absl::Status last_status_;  // guarded by mu_
};

}  // namespace topologyd::engine
