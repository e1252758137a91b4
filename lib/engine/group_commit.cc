#include "lib/engine/group_commit.h"

#include <algorithm>
#include <future>
#include <iterator>
#include <utility>

#include "absl/time/time.h"

#include "lib/common/thread_name.h"

namespace topologyd::engine {

GroupCommitter::GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                               uint64_t durable_generation, std::chrono::microseconds max_gather,
                               std::function<void()> written, const os::Clock* clock)
    : write_snapshot_(std::move(write_snapshot)),
      written_(std::move(written)),
      max_gather_(max_gather),
      clock_(clock != nullptr ? *clock : os::DefaultClock()),
      durable_(durable_generation),
      announced_(durable_generation),
      writer_([this] { WriterLoop(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  arrived_.Signal();
  writer_.join();
}

void GroupCommitter::WhenDurable(uint64_t generation, Done done) {
  {
    absl::MutexLock lock(&mu_);
    if (durable_ < generation) {
      const bool new_change = !pending_.contains(generation);
      pending_.emplace(generation, std::move(done));
      if (new_change && ++pending_changes_ == wake_at_) arrived_.Signal();
      return;
    }
  }
  done(absl::OkStatus());
}

absl::Status GroupCommitter::WaitDurable(uint64_t generation) {
  std::promise<absl::Status> result;
  std::future<absl::Status> ready = result.get_future();
  WhenDurable(generation, [&result](const absl::Status& s) { result.set_value(s); });
  return ready.get();
}

absl::Status GroupCommitter::WaitWritten(uint64_t generation) {
  if (absl::Status durable = WaitDurable(generation); !durable.ok()) return durable;
  absl::MutexLock lock(&mu_);
  struct Reached {
    const uint64_t* announced;
    uint64_t generation;
  } reached{&announced_, generation};
  mu_.Await(absl::Condition(
      +[](Reached* r) { return *r->announced >= r->generation; }, &reached));
  return absl::OkStatus();
}

void GroupCommitter::Gather() {
  if (pending_changes_ >= last_batch_) return;
  const auto deadline =
      clock_.Now() + std::min<std::chrono::steady_clock::duration>(last_write_, max_gather_);
  wake_at_ = last_batch_;
  // Timed against the steady clock (absl's deadlines are wall-clock times). A test's manual
  // clock ends the gathering only when it has moved on and an arrival or the timeout wakes us.
  while (pending_changes_ < last_batch_ && !stop_) {
    const auto left = deadline - clock_.Now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    arrived_.WaitWithTimeout(&mu_, absl::FromChrono(left));
  }
}

void GroupCommitter::WriterLoop() {
  NameThisThread("tpd-commit");
  // Locked and unlocked by hand: the lock is given up around the write and the callbacks.
  mu_.Lock();
  while (true) {
    wake_at_ = 1;
    while (!stop_ && pending_.empty()) arrived_.Wait(&mu_);
    if (pending_.empty()) break;  // stopping, and nobody is owed a write
    Gather();
    wake_at_ = 0;  // writing: no arrival needs to wake the writer until it looks again
    // The waiters this write is meant for; later arrivals may be covered too, but a failure
    // is reported only to these.
    const uint64_t newest_waiting = std::prev(pending_.end())->first;
    const auto started = clock_.Now();
    writing_since_ = started;
    mu_.Unlock();
    absl::StatusOr<uint64_t> wrote = write_snapshot_();
    const auto took = clock_.Now() - started;
    mu_.Lock();
    writing_since_.reset();
    ++writes_;
    if (!wrote.ok()) ++failed_writes_;
    last_status_ = wrote.status();
    auto end = wrote.ok() ? pending_.upper_bound(std::max(durable_, *wrote))
                          : pending_.upper_bound(newest_waiting);
    std::vector<Done> served;
    served.reserve(static_cast<size_t>(std::distance(pending_.begin(), end)));
    size_t changes = 0;
    for (auto it = pending_.begin(); it != end; ++it) {
      if (it == pending_.begin() || std::prev(it)->first != it->first) ++changes;
      served.push_back(std::move(it->second));
    }
    pending_.erase(pending_.begin(), end);
    pending_changes_ -= changes;
    if (wrote.ok()) {
      durable_ = std::max(durable_, *wrote);
      last_batch_ = std::max<size_t>(1, changes);
      last_write_ = took;
    }
    const absl::Status status = wrote.status();
    mu_.Unlock();
    for (Done& done : served) done(status);
    if (status.ok() && written_) written_();
    mu_.Lock();
    if (wrote.ok()) announced_ = std::max(announced_, *wrote);
  }
  mu_.Unlock();
}

GroupCommitter::Stats GroupCommitter::stats() const {
  absl::MutexLock lock(&mu_);
  return {.durable_generation = durable_,
          .writes = writes_,
          .failed_writes = failed_writes_,
          .last_batch = writes_ > failed_writes_ ? last_batch_ : 0,
          .last_write = last_status_,
          .writing_since = writing_since_};
}

uint64_t GroupCommitter::durable_generation() const {
  absl::MutexLock lock(&mu_);
  return durable_;
}

uint64_t GroupCommitter::writes() const {
  absl::MutexLock lock(&mu_);
  return writes_;
}

uint64_t GroupCommitter::failed_writes() const {
  absl::MutexLock lock(&mu_);
  return failed_writes_;
}

size_t GroupCommitter::last_batch() const {
  absl::MutexLock lock(&mu_);
  return last_batch_;
}

size_t GroupCommitter::waiting() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

absl::Status GroupCommitter::last_write_status() const {
  absl::MutexLock lock(&mu_);
  return last_status_;
}

}  // namespace topologyd::engine
