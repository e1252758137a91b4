// FileSystem: the few file operations the checkpoint store needs, behind an interface so tests
// can fail any one of them or simulate a crash.
//
// Paths are absolute or relative to the working directory and are passed through unchanged;
// confining them is the caller's job (the store builds every path from its own directory and
// fixed names). Errors carry the errno-derived absl code and name the path.
//
// PosixFileSystem is stateless and thread-safe. Tests wrap it in FaultInjectingFileSystem
// (tests/support).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::state {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Larger files are refused by ReadFile: far more than any checkpoint (a million containers
  // take about 400 MB), so such a file is damaged, and reading it would only exhaust memory.
  static constexpr size_t kMaxReadBytes = size_t{1} << 30;

  // The whole file. NOT_FOUND when it does not exist; OUT_OF_RANGE when it is larger than
  // kMaxReadBytes.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Creates `path` (which must not exist; symlinks are not followed) with `mode`, writes
  // `contents` and fsyncs the file. On error the file may exist with partial contents.
  virtual absl::Status WriteNewFileAndSync(const std::string& path, std::string_view contents,
                                           mode_t mode) = 0;
  // Replaces the contents of the existing regular file `path` (symlinks are not followed)
  // with `contents` and fsyncs it, but only if no other open file refers to it, so nobody who
  // opened it earlier sees it change. UNAVAILABLE when it is open elsewhere; FAILED_PRECONDITION
  // or UNIMPLEMENTED when this process or file system cannot tell; NOT_FOUND when it does not
  // exist. On a write error the file may hold a mix of old and new contents.
  virtual absl::Status OverwriteUnsharedFileAndSync(const std::string& path,
                                                    std::string_view contents) = 0;
  // rename(2): atomically replaces `to`.
  virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  // renameat2(RENAME_EXCHANGE): atomically swaps the files named `a` and `b`. NOT_FOUND when
  // either is missing; UNIMPLEMENTED when the file system cannot exchange names.
  virtual absl::Status Exchange(const std::string& a, const std::string& b) = 0;
  // fsyncs the directory, making the entries created, renamed or removed in it durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  // Removes a file. NOT_FOUND when it does not exist.
  virtual absl::Status Remove(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, without "." and "..", sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Creates one directory with `mode`; OK when a directory already exists there.
  virtual absl::Status MakeDir(const std::string& dir, mode_t mode) = 0;
};

// The real thing, on POSIX calls. OverwriteUnsharedFileAndSync proves the file unshared with
// a write lease (fcntl F_SETLEASE), held while it writes. Someone opening the file meanwhile
// makes the kernel send the lease holder SIGIO, which by default ends the process, so it works
// only while SIGIO is ignored (FAILED_PRECONDITION otherwise); the daemon ignores it.
class PosixFileSystem final : public FileSystem {
 public:
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status WriteNewFileAndSync(const std::string& path, std::string_view contents,
                                   mode_t mode) override;
  absl::Status OverwriteUnsharedFileAndSync(const std::string& path,
                                            std::string_view contents) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Exchange(const std::string& a, const std::string& b) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::Status Remove(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override;
  absl::Status MakeDir(const std::string& dir, mode_t mode) override;
};

// The directory part of `path` ("." when it has none).
std::string DirName(const std::string& path);

}  // namespace topologyd::state
