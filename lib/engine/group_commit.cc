#include "lib/engine/group_commit.h"

#include <algorithm>

namespace topologyd::engine {

GroupCommitter::GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                               uint64_t durable_generation, std::chrono::microseconds max_gather)
    : write_snapshot_(std::move(write_snapshot)),
      max_gather_(max_gather),
      durable_(durable_generation) {}

void GroupCommitter::Gather(std::unique_lock<std::mutex>& lock) {
  if (pending_.size() >= last_batch_) return;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::min<std::chrono::steady_clock::duration>(last_write_, max_gather_);
  while (pending_.size() < last_batch_) {
    if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout) return;
  }
}

absl::Status GroupCommitter::WaitDurable(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mu_);
  if (durable_ >= generation) return absl::OkStatus();
  pending_.insert(generation);
  arrived_.notify_one();
  while (durable_ < generation) {
    if (writing_) {
      written_.wait(lock);
      continue;
    }
    writing_ = true;
    Gather(lock);
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    absl::StatusOr<uint64_t> wrote = write_snapshot_();
    const auto took = std::chrono::steady_clock::now() - started;
    lock.lock();
    writing_ = false;
    ++writes_;
    last_status_ = wrote.status();
    if (wrote.ok()) {
      durable_ = std::max(durable_, *wrote);
      auto covered_end = pending_.upper_bound(durable_);
      last_batch_ = std::max<size_t>(1, std::distance(pending_.begin(), covered_end));
      pending_.erase(pending_.begin(), covered_end);
      last_write_ = took;
    }
    written_.notify_all();
    if (!wrote.ok()) {
      // Still pending (a failed write covers nothing); this caller stops waiting.
      if (auto it = pending_.find(generation); it != pending_.end()) pending_.erase(it);
      return wrote.status();
    }
  }
  return absl::OkStatus();
}

uint64_t GroupCommitter::durable_generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return durable_;
}

uint64_t GroupCommitter::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

size_t GroupCommitter::last_batch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_batch_;
}

size_t GroupCommitter::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

absl::Status GroupCommitter::last_write_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_status_;
}

}  // namespace topologyd::engine
