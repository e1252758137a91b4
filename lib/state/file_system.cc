#include "lib/state/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"

namespace topologyd::state {
namespace {

absl::Status Errno(int error_number, std::string_view op, std::string_view path) {
  return absl::ErrnoToStatus(error_number, fmt::format("{} {}", op, path));
}

// Closes the descriptor on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // close(2) can report a deferred write error, so writers check it.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

bool SigioIgnored() {
  struct sigaction action {};
  return ::sigaction(SIGIO, nullptr, &action) == 0 && (action.sa_flags & SA_SIGINFO) == 0 &&
         action.sa_handler == SIG_IGN;
}

absl::Status WriteAll(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(errno, "write", path);
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::StatusOr<std::string> PosixFileSystem::ReadFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Errno(errno, "open", path);
  // Read straight into a buffer sized from fstat (one byte over, so the read that sees the
  // end needs no growth): a checkpoint of hundreds of KB is then not grown by doubling, copied
  // and faulted in several times over, which is a measurable part of start-up. Reading goes
  // on to the end, so a file that changes size meanwhile is still read whole.
  auto too_large = [&] {
    return absl::OutOfRangeError(fmt::format(
        "read {}: the file is larger than {} bytes, far more than any checkpoint; it is damaged",
        path, kMaxReadBytes));
  };
  struct stat st;
  size_t capacity = 65536;
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<uint64_t>(st.st_size) > kMaxReadBytes) return too_large();
    capacity = static_cast<size_t>(st.st_size) + 1;
  }
  std::string contents(capacity, '\0');
  size_t size = 0;
  while (true) {
    if (size == contents.size()) {
      if (size > kMaxReadBytes) return too_large();
      contents.resize(std::min(contents.size() * 2, kMaxReadBytes + 1));
    }
    const ssize_t n = ::read(fd.get(), contents.data() + size, contents.size() - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(errno, "read", path);
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  contents.resize(size);
  return contents;
}

absl::Status PosixFileSystem::WriteNewFileAndSync(const std::string& path,
                                                  std::string_view contents, mode_t mode) {
  // O_EXCL also refuses a symlink planted at `path`.
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (fd.get() < 0) return Errno(errno, "create", path);
  TOPOLOGYD_RETURN_IF_ERROR(WriteAll(fd.get(), contents, path));
  if (::fsync(fd.get()) != 0) return Errno(errno, "fsync", path);
  if (fd.Close() != 0) return Errno(errno, "close", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::OverwriteUnsharedFileAndSync(const std::string& path,
                                                           std::string_view contents) {
  if (!SigioIgnored()) {
    return absl::FailedPreconditionError(fmt::format(
        "overwrite {}: SIGIO is not ignored, so no write lease can show the file unshared", path));
  }
  // O_NONBLOCK: a FIFO planted under the name must not hang the save (it is refused below).
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) return Errno(errno, "open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(fmt::format("overwrite {}: not a regular file", path));
  }
  // A write lease is granted only while no other open file refers to the inode; it is held
  // until the descriptor is closed, so a later opener waits for the finished contents.
  if (::fcntl(fd.get(), F_SETLEASE, F_WRLCK) != 0) {
    const int lease_errno = errno;
    if (lease_errno == EAGAIN) {
      return absl::UnavailableError(fmt::format("overwrite {}: the file is open elsewhere", path));
    }
    if (lease_errno == EINVAL) {
      return absl::UnimplementedError(
          fmt::format("overwrite {}: this file system has no leases", path));
    }
    return Errno(lease_errno, "lease", path);
  }
  TOPOLOGYD_RETURN_IF_ERROR(WriteAll(fd.get(), contents, path));
  if (st.st_size > static_cast<off_t>(contents.size()) &&
      ::ftruncate(fd.get(), static_cast<off_t>(contents.size())) != 0) {
    return Errno(errno, "truncate", path);
  }
  if (::fsync(fd.get()) != 0) return Errno(errno, "fsync", path);
  if (fd.Close() != 0) return Errno(errno, "close", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return Errno(errno, "rename", fmt::format("{} to {}", from, to));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::Exchange(const std::string& a, const std::string& b) {
  if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) {
    const int exchange_errno = errno;
    // EINVAL: this file system does not implement the flag (ENOSYS: the kernel does not).
    if (exchange_errno == EINVAL || exchange_errno == ENOSYS || exchange_errno == EOPNOTSUPP) {
      return absl::UnimplementedError(
          fmt::format("exchange {} and {}: not supported by this file system ({})", a, b,
                      std::strerror(exchange_errno)));
    }
    return Errno(exchange_errno, "exchange", fmt::format("{} and {}", a, b));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::SyncDir(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Errno(errno, "open directory", dir);
  if (::fsync(fd.get()) != 0) return Errno(errno, "fsync directory", dir);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::Remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return Errno(errno, "remove", path);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PosixFileSystem::ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno(errno, "list directory", dir);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  const int read_errno = errno;
  ::closedir(d);
  if (read_errno != 0) return Errno(read_errno, "list directory", dir);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status PosixFileSystem::MakeDir(const std::string& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) == 0) return absl::OkStatus();
  const int mkdir_errno = errno;
  struct stat st;
  if (mkdir_errno == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::OkStatus();
  }
  return Errno(mkdir_errno, "create directory", dir);
}

}  // namespace topologyd::state
