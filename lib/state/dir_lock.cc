#include "lib/state/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"

#include "lib/state/file_store.h"
#include "lib/state/file_system.h"

namespace topologyd::state {

absl::StatusOr<StateDirLock> StateDirLock::Acquire(const std::string& dir) {
  PosixFileSystem fs;
  if (absl::StatusOr<CheckpointStore> store = CheckpointStore::Open(&fs, dir); !store.ok()) {
    return store.status();
  }
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        fmt::format("cannot open the state directory {}: {}", dir, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(fmt::format(
          "the state directory {} is in use by another topologyd process; two daemons on one "
          "state directory would hand out the same CPUs. Stop the other one first",
          dir));
    }
    return absl::FailedPreconditionError(
        fmt::format("cannot lock the state directory {}: {}", dir, std::strerror(error)));
  }
  return StateDirLock(fd);
}

StateDirLock::StateDirLock(StateDirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

StateDirLock& StateDirLock::operator=(StateDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

StateDirLock::~StateDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace topologyd::state
