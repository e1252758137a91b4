#include "lib/cgroup/cgroup_root.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "fmt/format.h"

#include "lib/cgroup/naming.h"
#include "lib/common/quote.h"

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

namespace topologyd::cgroup {
namespace {

// Interface files are a few KiB at most; anything larger is not a cgroup file.
constexpr size_t kMaxReadBytes = 1 << 20;

#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
constexpr bool kHaveOpenat2Headers = true;

long RawOpenat2(int dirfd, const char* path, int flags) {
  struct open_how how;
  std::memset(&how, 0, sizeof(how));
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  // RESOLVE_BENEATH may return EAGAIN when a concurrent rename could have let ".." escape;
  // our paths contain no "..", but retrying a few times is what the man page asks for.
  for (int attempt = 0; attempt < 8; ++attempt) {
    fd = ::syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return fd;
}
#else
constexpr bool kHaveOpenat2Headers = false;

long RawOpenat2(int, const char*, int) {
  errno = ENOSYS;
  return -1;
}
#endif

const char* ErrnoName(int err) {
  switch (err) {
    case ENOENT:
      return "ENOENT";
    case ENODEV:
      return "ENODEV";
    case ENOTDIR:
      return "ENOTDIR";
    case ELOOP:
      return "ELOOP";
    case EXDEV:
      return "EXDEV";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case EINVAL:
      return "EINVAL";
    case ENOSPC:
      return "ENOSPC";
    case EBUSY:
      return "EBUSY";
    case ERANGE:
      return "ERANGE";
    case ESRCH:
      return "ESRCH";
    case ENOSYS:
      return "ENOSYS";
    case EISDIR:
      return "EISDIR";
    default:
      return "errno";
  }
}

// Kind of what `fd` refers to; INVALID_ARGUMENT for a symlink (only reachable with O_PATH).
absl::StatusOr<EntryKind> KindOf(int fd, std::string_view what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoToStatus(errno, fmt::format("fstat {}", what));
  if (S_ISLNK(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format("{} is a symlink; refused", what));
  }
  if (S_ISDIR(st.st_mode)) return EntryKind::kDirectory;
  if (S_ISREG(st.st_mode)) return EntryKind::kFile;
  return absl::FailedPreconditionError(
      fmt::format("{} is neither a directory nor a regular file", what));
}

absl::Status ValidateCgroupOrRoot(std::string_view cgroup) {
  return cgroup.empty() ? absl::OkStatus() : ValidateRelativeCgroupPath(cgroup);
}

}  // namespace

absl::Status ErrnoToStatus(int err, std::string_view what) {
  const std::string message = fmt::format("{}: {} ({})", what, ErrnoName(err), ::strerror(err));
  switch (err) {
    case ENOENT:
    case ENODEV:  // kernfs: the cgroup was removed while we held the file open
    case ESRCH:
      return absl::NotFoundError(message);
    case ELOOP:
    case EXDEV:
      return absl::InvalidArgumentError(
          fmt::format("{}; symlinks and paths leaving the cgroup root are refused", message));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EINVAL:
    case ENOSPC:
    case EBUSY:
    case ERANGE:
    case ENOTDIR:
    case EISDIR:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<CgroupRoot> CgroupRoot::Open(const std::string& path, PathResolver resolver) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoToStatus(errno, fmt::format("open cgroup root {}", path));
  if (resolver == PathResolver::kWalk) return CgroupRoot(path, std::move(fd), resolver);

  // Probe once: seccomp profiles of older container runtimes answer EPERM instead of ENOSYS.
  UniqueFd probe(static_cast<int>(RawOpenat2(fd.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC)));
  const int err = errno;
  if (probe.valid()) return CgroupRoot(path, std::move(fd), PathResolver::kOpenat2);
  if (resolver == PathResolver::kOpenat2) {
    return absl::FailedPreconditionError(fmt::format("openat2 is not usable here ({}; headers {})",
                                                     ErrnoName(err),
                                                     kHaveOpenat2Headers ? "present" : "absent"));
  }
  return CgroupRoot(path, std::move(fd), PathResolver::kWalk);
}

std::string CgroupRoot::Describe(std::string_view cgroup, std::string_view name) const {
  std::string out = path_;
  for (std::string_view part : {cgroup, name}) {
    if (!part.empty()) out += fmt::format("/{}", EscapeForMessage(part));
  }
  return out;
}

absl::StatusOr<UniqueFd> CgroupRoot::OpenBeneath(std::string_view cgroup, std::string_view name,
                                                 int flags) const {
  if (absl::Status s = ValidateCgroupOrRoot(cgroup); !s.ok()) return s;
  if (!name.empty()) {
    if (absl::Status s = ValidateCgroupFileName(name); !s.ok()) return s;
  }
  if (resolver_ == PathResolver::kOpenat2) {
    std::string rel;
    if (cgroup.empty() && name.empty()) {
      rel = ".";
    } else if (cgroup.empty() || name.empty()) {
      rel = std::string(cgroup.empty() ? name : cgroup);
    } else {
      rel = fmt::format("{}/{}", cgroup, name);
    }
    absl::StatusOr<UniqueFd> fd = OpenWithOpenat2(rel, flags);
    if (!fd.ok()) {
      return absl::Status(fd.status().code(), fmt::format("{}: {}", Describe(cgroup, name),
                                                          std::string(fd.status().message())));
    }
    return fd;
  }
  return OpenByWalk(cgroup, name, flags);
}

absl::StatusOr<UniqueFd> CgroupRoot::OpenWithOpenat2(const std::string& rel, int flags) const {
  UniqueFd fd(static_cast<int>(RawOpenat2(fd_.get(), rel.c_str(), flags | O_CLOEXEC)));
  if (!fd.valid()) return ErrnoToStatus(errno, "openat2");
  return fd;
}

absl::StatusOr<UniqueFd> CgroupRoot::OpenByWalk(std::string_view cgroup, std::string_view name,
                                                int flags) const {
  // Each directory step is opened O_PATH|O_NOFOLLOW, which yields the symlink itself rather
  // than its target; fstat then tells us it is a symlink and we refuse it.
  UniqueFd current;
  auto dir_fd = [&]() { return current.valid() ? current.get() : fd_.get(); };
  const bool last_is_dir = name.empty();
  size_t start = 0;
  while (start < cgroup.size()) {
    const size_t slash = cgroup.find('/', start);
    const size_t end = slash == std::string_view::npos ? cgroup.size() : slash;
    const std::string component(cgroup.substr(start, end - start));
    const std::string_view so_far = cgroup.substr(0, end);
    const bool final_step = last_is_dir && end == cgroup.size();
    // O_DIRECTORY is dropped: on a symlink it would turn our INVALID_ARGUMENT into ENOTDIR.
    const int step_flags = final_step ? (flags & ~O_DIRECTORY) : O_PATH;
    UniqueFd next(::openat(dir_fd(), component.c_str(), step_flags | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return ErrnoToStatus(errno, Describe(so_far, {}));
    absl::StatusOr<EntryKind> kind = KindOf(next.get(), Describe(so_far, {}));
    if (!kind.ok()) return kind.status();
    if (*kind != EntryKind::kDirectory) {
      return ErrnoToStatus(ENOTDIR, Describe(so_far, {}));
    }
    current = std::move(next);
    start = end + 1;
  }
  if (last_is_dir) {
    if (current.valid()) return current;
    // The root itself: a fresh descriptor, so the caller may own it.
    UniqueFd self(::openat(fd_.get(), ".", flags | O_CLOEXEC));
    if (!self.valid()) return ErrnoToStatus(errno, Describe({}, {}));
    return self;
  }
  const std::string file(name);
  UniqueFd fd(::openat(dir_fd(), file.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return ErrnoToStatus(errno, Describe(cgroup, name));
  return fd;
}

absl::StatusOr<CgroupRoot> CgroupRoot::OpenSubtree(std::string_view cgroup) const {
  absl::StatusOr<UniqueFd> fd = OpenBeneath(cgroup, {}, O_PATH | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  absl::StatusOr<EntryKind> kind = KindOf(fd->get(), Describe(cgroup, {}));
  if (!kind.ok()) return kind.status();
  if (*kind != EntryKind::kDirectory) return ErrnoToStatus(ENOTDIR, Describe(cgroup, {}));
  std::string sub_path = cgroup.empty() ? path_ : fmt::format("{}/{}", path_, cgroup);
  return CgroupRoot(std::move(sub_path), std::move(*fd), resolver_);
}

absl::StatusOr<CgroupRoot> CgroupRoot::OpenMount(std::string_view mount) const {
  // One component of mount-name bytes: nothing to resolve but the entry itself, which
  // O_NOFOLLOW opens as it is, so KindOf refuses a symlink.
  const bool valid = !mount.empty() && mount != "." && mount != ".." &&
                     std::all_of(mount.begin(), mount.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '_' ||
                              c == '=' || c == '.' || c == '-';
                     });
  if (!valid) {
    return absl::InvalidArgumentError(
        fmt::format("{} is not a cgroup v1 mount name ([A-Za-z0-9,_=.-])", QuoteForMessage(mount)));
  }
  const std::string name(mount);
  UniqueFd fd(::openat(fd_.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return ErrnoToStatus(errno, Describe(mount, {}));
  absl::StatusOr<EntryKind> kind = KindOf(fd.get(), Describe(mount, {}));
  if (!kind.ok()) return kind.status();
  if (*kind != EntryKind::kDirectory) return ErrnoToStatus(ENOTDIR, Describe(mount, {}));
  return CgroupRoot(fmt::format("{}/{}", path_, name), std::move(fd), resolver_);
}

absl::StatusOr<EntryKind> CgroupRoot::Stat(std::string_view cgroup, std::string_view name) const {
  absl::StatusOr<UniqueFd> fd = OpenBeneath(cgroup, name, O_PATH);
  if (!fd.ok()) {
    if (fd.status().code() == absl::StatusCode::kNotFound) return EntryKind::kMissing;
    return fd.status();
  }
  return KindOf(fd->get(), Describe(cgroup, name));
}

absl::StatusOr<std::string> CgroupRoot::ReadFile(std::string_view cgroup,
                                                 std::string_view name) const {
  if (name.empty()) return absl::InvalidArgumentError("ReadFile needs a file name");
  // O_NONBLOCK|O_NOCTTY: opening something odd planted in a fake tree (a FIFO, a tty) must not
  // block or change our terminal; the S_ISREG check below then refuses it.
  absl::StatusOr<UniqueFd> fd = OpenBeneath(cgroup, name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) return fd.status();
  absl::StatusOr<EntryKind> kind = KindOf(fd->get(), Describe(cgroup, name));
  if (!kind.ok()) return kind.status();
  if (*kind != EntryKind::kFile) return ErrnoToStatus(EISDIR, Describe(cgroup, name));
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd->get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, fmt::format("read {}", Describe(cgroup, name)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxReadBytes) {
      return absl::FailedPreconditionError(
          fmt::format("{} is larger than {} bytes", Describe(cgroup, name), kMaxReadBytes));
    }
  }
  return out;
}

absl::Status CgroupRoot::WriteFile(std::string_view cgroup, std::string_view name,
                                   std::string_view content) const {
  if (name.empty()) return absl::InvalidArgumentError("WriteFile needs a file name");
  // O_TRUNC: on a regular file (fake tree) the new content replaces the old; kernfs ignores it.
  absl::StatusOr<UniqueFd> fd =
      OpenBeneath(cgroup, name, O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) return fd.status();
  absl::StatusOr<EntryKind> kind = KindOf(fd->get(), Describe(cgroup, name));
  if (!kind.ok()) return kind.status();
  if (*kind != EntryKind::kFile) return ErrnoToStatus(EISDIR, Describe(cgroup, name));
  // cgroupfs parses each write(2) as one complete value, so the value must go in one call.
  ssize_t n;
  do {
    n = ::write(fd->get(), content.data(), content.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int err = errno;
    const std::string what =
        fmt::format("write \"{}\" to {}", EscapeForMessage(content), Describe(cgroup, name));
    // Permissions were checked by open(2); a write(2) refused with EACCES/EPERM is the kernel
    // rejecting the value - cgroup v1 cpuset answers EACCES when a cgroup's cpus or mems would
    // leave its parent's set, or a child's would leave this one's.
    if (err == EACCES || err == EPERM) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: {} ({}); v1 cpusets must stay within the parent's and contain the children's", what,
          ErrnoName(err), ::strerror(err)));
    }
    return ErrnoToStatus(err, what);
  }
  if (static_cast<size_t>(n) != content.size()) {
    return absl::InternalError(fmt::format("short write to {} ({} of {} bytes)",
                                           Describe(cgroup, name), n, content.size()));
  }
  return absl::OkStatus();
}

}  // namespace topologyd::cgroup
