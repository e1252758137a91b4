// CgroupRoot: confined access to one directory tree (a cgroup hierarchy, or a fake one in tests).
//
// A CgroupRoot owns an O_PATH descriptor of the directory it was opened on. Every later access
// names a cgroup by a path relative to that directory and a file name inside it; both are
// validated syntactically (see naming.h) and then resolved so that the kernel itself refuses to
// leave the tree or to follow any symlink:
//   * PathResolver::kOpenat2: one openat2(2) call with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//     RESOLVE_NO_MAGICLINKS (Linux >= 5.6).
//   * PathResolver::kWalk: component by component, openat(O_PATH | O_NOFOLLOW) on the previous
//     directory's descriptor, checking with fstat that each step is a real directory. Used when
//     openat2 is missing (ENOSYS) or filtered (EPERM from a seccomp profile).
// kAuto probes openat2 once in Open() and picks. Tests force kWalk to cover the fallback.
//
// A symlink anywhere on the path - pointing inside the tree or not - is refused with
// INVALID_ARGUMENT, as are paths that fail validation; neither reaches a write. The directory
// passed to Open() itself is trusted configuration and may be reached through symlinks.
//
// Errors (absl codes): INVALID_ARGUMENT bad path or symlink; NOT_FOUND missing cgroup or file
// (ENOENT, or ENODEV from a cgroup removed while open); PERMISSION_DENIED EACCES/EPERM;
// FAILED_PRECONDITION the kernel refused the value (EINVAL, ENOSPC, EBUSY, ERANGE, and EACCES or
// EPERM from write(2) itself: v1 cpuset answers EACCES when a value would break the subset rule)
// or a path component is not a directory; INTERNAL anything else. Messages carry the errno name.
//
// Thread-safety: all methods are const and use only the owned descriptor; concurrent calls are
// safe. Moving a CgroupRoot while another thread uses it is not.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/cgroup/unique_fd.h"

namespace topologyd::cgroup {

enum class PathResolver { kAuto, kOpenat2, kWalk };

// What a path names, as seen without following symlinks.
enum class EntryKind { kMissing, kDirectory, kFile };

class CgroupRoot {
 public:
  // Opens `path` (absolute or relative to the working directory; must be a directory).
  // kOpenat2 fails with FAILED_PRECONDITION when the kernel lacks openat2.
  static absl::StatusOr<CgroupRoot> Open(const std::string& path,
                                         PathResolver resolver = PathResolver::kAuto);

  CgroupRoot(CgroupRoot&&) = default;
  CgroupRoot& operator=(CgroupRoot&&) = default;

  // The path given to Open() (for messages), and the resolver in use (never kAuto).
  const std::string& path() const { return path_; }
  PathResolver resolver() const { return resolver_; }

  // A new CgroupRoot on the directory `cgroup` below this one (confined like any access), with
  // the same resolver. Used to descend from a configured root into the cpuset hierarchy.
  absl::StatusOr<CgroupRoot> OpenSubtree(std::string_view cgroup) const;
  // The same for a cgroup v1 mount directly below this root, named as the kernel names
  // co-mounted controllers ("cpu,cpuacct": a ',' no cgroup path has). A symlink (systemd links
  // "cpu" to "cpu,cpuacct") is INVALID_ARGUMENT, a missing one NOT_FOUND.
  absl::StatusOr<CgroupRoot> OpenMount(std::string_view mount) const;

  // What `cgroup` (and, if `name` is non-empty, the file `name` in it) is. "" names this root.
  // A symlink is INVALID_ARGUMENT, not a kind.
  absl::StatusOr<EntryKind> Stat(std::string_view cgroup, std::string_view name = {}) const;

  // Whole content of file `name` in `cgroup` ("" = this root). At most 1 MiB.
  absl::StatusOr<std::string> ReadFile(std::string_view cgroup, std::string_view name) const;

  // Writes `content` to the existing file `name` in `cgroup` ("" = this root) with one write(2),
  // as cgroupfs expects; never creates files. On a regular file (a fake tree) the content
  // replaces the old one.
  absl::Status WriteFile(std::string_view cgroup, std::string_view name,
                         std::string_view content) const;

 private:
  CgroupRoot(std::string path, UniqueFd fd, PathResolver resolver)
      : path_(std::move(path)), fd_(std::move(fd)), resolver_(resolver) {}

  // Opens "<cgroup>/<name>" beneath the root with `flags` (O_CLOEXEC and no-follow added).
  // `name` empty opens the directory `cgroup` itself.
  absl::StatusOr<UniqueFd> OpenBeneath(std::string_view cgroup, std::string_view name,
                                       int flags) const;
  absl::StatusOr<UniqueFd> OpenWithOpenat2(const std::string& rel, int flags) const;
  absl::StatusOr<UniqueFd> OpenByWalk(std::string_view cgroup, std::string_view name,
                                      int flags) const;
  std::string Describe(std::string_view cgroup, std::string_view name) const;

  std::string path_;
  UniqueFd fd_;
  PathResolver resolver_ = PathResolver::kWalk;
};

// The absl status for `err` (an errno value) while doing `what`, with the code mapping above.
absl::Status ErrnoToStatus(int err, std::string_view what);

}  // namespace topologyd::cgroup
