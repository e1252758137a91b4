// GroupCommitter: makes state changes durable in batches. Each change gets a generation
// number when it is applied in memory; a caller that must not reply before its change is on
// disk calls WaitDurable(generation). One caller at a time writes a snapshot of the newest
// state (which contains every change applied so far); callers whose generation that write
// covers return without writing themselves. Under concurrency one fsync serves many
// admissions; alone, each change costs one write, as it must.
//
// Gathering: clients that wait for acknowledgements come back together — the callers one
// write served send their next change within about one round trip of its reply. A writer
// that would start with fewer changes pending than the previous write served waits for the
// rest, at most as long as that write took (and never longer than `max_gather`), so a steady
// group of clients shares one write per round instead of splitting into a write of one and
// a write of the others. A lone caller (previous write served one) never waits.
//
// A failed write fails the caller that attempted it; the next waiter tries again, so a
// transient error costs retries, never an acknowledged-but-lost change.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::engine {

class GroupCommitter {
 public:
  static constexpr std::chrono::microseconds kDefaultMaxGather{2000};

  // `write_snapshot` writes the current state durably and returns the generation it wrote.
  // It is called by one thread at a time, without any GroupCommitter lock held.
  explicit GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                          uint64_t durable_generation = 0,
                          std::chrono::microseconds max_gather = kDefaultMaxGather);

  // Blocks until `generation` is durable, writing it if no other caller is. The error of
  // the write this caller attempted, if it failed.
  absl::Status WaitDurable(uint64_t generation);

  uint64_t durable_generation() const;
  uint64_t writes() const;
  // How many waiting callers the last successful write served.
  size_t last_batch() const;
  // Callers waiting for a generation that is not durable yet.
  size_t waiting() const;
  // The last write's result (OK before the first write).
  absl::Status last_write_status() const;

 private:
  // Called by the writer before its snapshot: waits (releasing `lock`) until as many changes
  // are pending as the previous write served, or the gather time is over.
  void Gather(std::unique_lock<std::mutex>& lock);

  const std::function<absl::StatusOr<uint64_t>()> write_snapshot_;
  const std::chrono::microseconds max_gather_;
  mutable std::mutex mu_;
  std::condition_variable written_;  // a write finished
  std::condition_variable arrived_;  // a caller started waiting (wakes a gathering writer)
  uint64_t durable_ = 0;             // guarded by mu_
  bool writing_ = false;             // guarded by mu_
  uint64_t writes_ = 0;              // guarded by mu_
  absl::Status last_status_;         // guarded by mu_
  // Generations of the callers waiting for durability; a successful write removes the ones
  // it covers. Guarded by mu_.
  std::multiset<uint64_t> pending_;
  size_t last_batch_ = 1;                             // guarded by mu_
  std::chrono::steady_clock::duration last_write_{};  // guarded by mu_
};

}  // namespace topologyd::engine
