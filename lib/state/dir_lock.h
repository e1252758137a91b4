// StateDirLock: one daemon per state directory. Two daemons on one directory would each
// restore the same allocations, hand out the same free CPUs and overwrite each other's
// checkpoints, so the second refuses to start. The lock is flock(2) on the directory itself
// (no lock file to leave behind), released by the kernel when the process exits, however it
// exits.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace topologyd::state {

class StateDirLock {
 public:
  // Creates `dir` if missing (0700, like CheckpointStore::Open) and locks it.
  // FAILED_PRECONDITION when another process holds the lock.
  static absl::StatusOr<StateDirLock> Acquire(const std::string& dir);

  StateDirLock(StateDirLock&& other) noexcept;
  StateDirLock& operator=(StateDirLock&& other) noexcept;
  StateDirLock(const StateDirLock&) = delete;
  StateDirLock& operator=(const StateDirLock&) = delete;
  ~StateDirLock();

 private:
  explicit StateDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace topologyd::state
