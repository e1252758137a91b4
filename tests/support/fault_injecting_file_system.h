// FaultInjectingFileSystem: a FileSystem wrapper for crash and error tests that fails chosen
// calls and undoes what a power loss would. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/state/file_system.h"

namespace topologyd::state {

// Wraps another FileSystem (not owned; must outlive this) for crash and error tests.
//
// Fault injection: FailOperation(n, errno) makes the n-th call (1-based, counted from the
// wrapper's creation or the last ResetCountForTest(), across all methods) fail with that errno
// without reaching the wrapped file system; FailFrom(n, errno) does so for that call and every
// later one. A failing WriteNewFileAndSync or OverwriteUnsharedFileAndSync first writes half of
// the contents unsynced, as a real short write would leave them.
//
// Crash simulation: file creations, renames, exchanges and removals become durable only when
// their directory is synced (SyncDir), as on a real file system after power loss. The
// contents an overwrite fsynced stay. SimulateCrash() undoes every change not yet made
// durable, newest first: renames and exchanges are reverted (restoring the file a rename
// replaced), created files and partial writes are deleted. Names stand for the files behind
// them, so an overwrite through a name whose exchange is undone lands where it would on disk.
// ReadFile is never counted as a change.
class FaultInjectingFileSystem final : public FileSystem {
 public:
  explicit FaultInjectingFileSystem(FileSystem* base) : base_(base) {}

  void FailOperation(int n, int error_number);
  // Like FailOperation, but every call from the n-th on fails: a disk that went away.
  void FailFrom(int n, int error_number);
  int operation_count() const { return count_; }
  void ResetCountForTest() { count_ = 0; }
  // Reverts the wrapped file system to its last durable state (see above).
  absl::Status SimulateCrash();

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

 private:
  // One change not yet made durable by a directory sync.
  struct Pending {
    enum class Kind { kCreate, kRename, kExchange, kRemove } kind;
    std::string path;                     // created / removed file, or rename/exchange target
    std::string from;                     // rename/exchange source
    std::optional<std::string> previous;  // contents `path` had before a rename or removal
  };

  // Counts the call; returns the injected error if this is the call to fail.
  std::optional<absl::Status> Tick(std::string_view op, const std::string& path);

  FileSystem* base_;
  int count_ = 0;
  int fail_at_ = 0;
  int fail_errno_ = 0;
  bool fail_on_ = false;  // keep failing after fail_at_
  std::vector<Pending> pending_;
};

}  // namespace topologyd::state
