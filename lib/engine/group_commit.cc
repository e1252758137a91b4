#include "lib/engine/group_commit.h"

#include <algorithm>

namespace topologyd::engine {

GroupCommitter::GroupCommitter(std::function<absl::StatusOr<uint64_t>()> write_snapshot,
                               uint64_t durable_generation)
    : write_snapshot_(std::move(write_snapshot)), durable_(durable_generation) {}

absl::Status GroupCommitter::WaitDurable(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mu_);
  while (durable_ < generation) {
    if (writing_) {
      written_.wait(lock);
      continue;
    }
    writing_ = true;
    lock.unlock();
    absl::StatusOr<uint64_t> wrote = write_snapshot_();
    lock.lock();
    writing_ = false;
    ++writes_;
    last_status_ = wrote.status();
    if (wrote.ok()) durable_ = std::max(durable_, *wrote);
    written_.notify_all();
    if (!wrote.ok()) return wrote.status();
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

absl::Status GroupCommitter::last_write_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_status_;
}

}  // namespace topologyd::engine
