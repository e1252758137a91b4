// GroupCommitter: makes state changes durable in batches. Each change gets a generation
// number when it is applied in memory; a caller that must not reply before its change is on
// disk asks to be told when that generation is durable — WhenDurable(generation, done) runs
// `done` afterwards, WaitDurable(generation) blocks until then. One writer thread writes a
// snapshot of the newest state (which contains every change applied so far) and then
// completes every waiter that snapshot covers, so under concurrency one fsync serves many
// changes, and no thread blocks per change: an RPC can hand over its reply and return.
//
// Gathering: clients that wait for acknowledgements come back together — the callers one
// write served send their next change within about one round trip of its reply. When fewer
// changes are pending than the previous write served, the writer waits for the rest, at
// most as long as that write took (and never longer than `max_gather`), so a steady group
// of clients shares one write per round instead of splitting into a write of one and a
// write of the others. A lone caller (previous write served one) never waits.
//
// A failed write fails the waiters that were pending when it started (nothing of theirs is
// acknowledged); later waiters get a fresh attempt, so a transient error costs retries,
// never an acknowledged-but-lost change.
//
// Thread-safety: all methods may be called concurrently. `done` callbacks run on the writer
// thread, in generation order (or at once on the caller's thread when the generation is
// already durable), with no GroupCommitter lock held; they must not call WaitDurable.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/os/clock.h"

namespace topologyd::engine {

class GroupCommitter {
 public:
  static constexpr std::chrono::microseconds kDefaultMaxGather{2000};
  using Done = std::function<void(const absl::Status&)>;

  // `write_snapshot` writes the current state durably and returns the generation it wrote.
  // It is called on the writer thread, without any GroupCommitter lock held. `written`, if
  // set, runs there too after each successful write, once the waiters it served were
  // completed (their replies are out), with no GroupCommitter lock held.
  explicit GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                          uint64_t durable_generation = 0,
                          std::chrono::microseconds max_gather = kDefaultMaxGather,
                          std::function<void()> written = nullptr,
                          const os::Clock* clock = nullptr);  // null: os::DefaultClock()
  // Serves the waiters still pending (writing for them), then stops the writer thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Runs `done(OK)` once `generation` is durable, or `done(error)` with the error of the
  // write that was to cover it.
  void WhenDurable(uint64_t generation, Done done);
  // Blocks until `generation` is durable; the error of the write that was to cover it.
  absl::Status WaitDurable(uint64_t generation);
  // WaitDurable, and then until the `written` callback of the write that covered
  // `generation` has returned (a shutdown that must not stop the listeners of `written`
  // before they have heard of everything acknowledged).
  absl::Status WaitWritten(uint64_t generation);

  // One consistent reading of the counters below.
  struct Stats {
    uint64_t durable_generation = 0;
    uint64_t writes = 0;
    uint64_t failed_writes = 0;
    size_t last_batch = 0;  // 0 until a write succeeded
    absl::Status last_write;
    // When the write in progress began; empty while the writer is not writing. A write
    // that never returns (a hung fsync) shows here and nowhere else.
    std::optional<std::chrono::steady_clock::time_point> writing_since;
  };
  Stats stats() const;

  uint64_t durable_generation() const;
  // Writes attempted, and how many of them failed.
  uint64_t writes() const;
  uint64_t failed_writes() const;
  // How many changes (distinct generations waited for) the last successful write served.
  size_t last_batch() const;
  // Waiters whose generation is not durable yet (including those the current write serves).
  size_t waiting() const;
  // The last write's result (OK before the first write).
  absl::Status last_write_status() const;

 private:
  void WriterLoop();
  // Called by the writer before its snapshot: waits (releasing mu_) until as many changes
  // are pending as the previous write served, or the gather time is over. Changes, not
  // waiters: a caller told of a decision early waits for the same generation as the change's
  // own waiter, and gathering for it would only delay the write.
  void Gather() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<absl::StatusOr<uint64_t>()> write_snapshot_;
  const std::function<void()> written_;
  const std::chrono::microseconds max_gather_;
  const os::Clock& clock_;  // the write's duration, the gather's deadline
  mutable absl::Mutex mu_;
  absl::CondVar arrived_;  // wake_at_ waiters are pending, or stop_ was set
  uint64_t durable_ ABSL_GUARDED_BY(mu_) = 0;
  // The newest generation whose write has also run `written_` (the start's counts).
  uint64_t announced_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failed_writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_status_ ABSL_GUARDED_BY(mu_);
  // The waiters, by generation; a write completes and removes the ones it covers.
  std::multimap<uint64_t, Done> pending_ ABSL_GUARDED_BY(mu_);
  size_t pending_changes_ ABSL_GUARDED_BY(mu_) = 0;  // distinct generations in pending_
  size_t last_batch_ ABSL_GUARDED_BY(mu_) = 1;
  std::chrono::steady_clock::duration last_write_ ABSL_GUARDED_BY(mu_){};
  std::optional<std::chrono::steady_clock::time_point> writing_since_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // How many pending changes make the writer's wait worth ending: 1 while it is idle, the
  // gather target while it gathers, none while it writes. Arrivals below it do not wake the
  // writer (each wake-up is a context switch).
  size_t wake_at_ ABSL_GUARDED_BY(mu_) = 1;
  std::thread writer_;
};

}  // namespace topologyd::engine
