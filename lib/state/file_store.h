// CheckpointStore: keeps the state checkpoint durable in one directory (by default
// /var/lib/topologyd), as `state.json`.
//
// Save writes a temp file `state.json.tmp-<random>` in the same directory, fsyncs it, renames
// it over `state.json` and fsyncs the directory, so after a crash or power loss the file holds
// either the previous or the new state, never a mix. The store writes only inside its directory
// and only under those fixed names; nothing from a request ever becomes part of a path.
//
// Reuse: the rename is an exchange (renameat2 RENAME_EXCHANGE) where the file system has one,
// so the previous checkpoint's file stays under the temp name; the next Save overwrites it in
// place instead of creating one file and deleting another (about a third less time per save
// on ext4). It does so only when
//  - the directory fsync has made the exchange durable (else, after a crash, that file could
//    still be `state.json`, and a torn overwrite would destroy the checkpoint), and
//  - nobody has the file open (FileSystem::OverwriteUnsharedFileAndSync), so a reader that
//    opened `state.json` before it was retired still reads one whole state.
// Otherwise, and after any error, the store drops the file and writes a new one. Where the
// file system or process cannot exchange or prove a file unshared, Save is the plain protocol.
//
// Ownership: the store does not own the FileSystem, which must outlive it.
// Thread-safety: none. The engine is the only user and serializes its calls; two stores (or
// processes) on one directory are not supported.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/state/file_system.h"
#include "lib/state/state.h"

namespace topologyd::state {

class CheckpointStore {
 public:
  static constexpr const char* kFileName = "state.json";
  static constexpr const char* kTempPrefix = "state.json.tmp-";

  // Creates `dir` (and missing parents) with mode 0700 if needed. `dir` must be non-empty.
  // Errors: INVALID_ARGUMENT for an empty dir; the errno-derived code when the directory cannot
  // be created.
  [[nodiscard]] static absl::StatusOr<CheckpointStore> Open(FileSystem* fs, std::string dir);

  // Makes `state` the durable checkpoint. Returns OK only after the directory fsync, i.e. when
  // the state survives power loss. On error:
  //  - before the rename, `state.json` is untouched and the temp file has been removed;
  //  - if the directory fsync fails, the rename has happened but may not survive a crash: the
  //    file then holds the previous or the new state, and the caller must treat the outcome as
  //    unknown (do not reply; retry Save, or stop).
  // INVALID_ARGUMENT if `state` cannot be encoded; otherwise the errno-derived code.
  [[nodiscard]] absl::Status Save(const State& state);

  // The saved state; std::nullopt when there is no checkpoint (first start). Also removes temp
  // files a crash during Save left behind (best effort). Errors come from DecodeState (DATA_LOSS,
  // FAILED_PRECONDITION, with the path and what to do) or from reading (errno-derived code).
  [[nodiscard]] absl::StatusOr<std::optional<State>> Load();

  const std::string& dir() const { return dir_; }
  std::string path() const { return dir_ + "/" + kFileName; }

 private:
  CheckpointStore(FileSystem* fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}

  // Writes and fsyncs `bytes` into the spare file if there is one, else a new temp file;
  // `temp` is set to the file used.
  absl::Status WriteTemp(std::string_view bytes, std::string* temp);
  // Puts `temp` in place as `state.json`: exchanged where possible (`kept_previous` is then
  // true and `temp` names the previous checkpoint), renamed otherwise.
  absl::Status Publish(const std::string& temp, bool* kept_previous);

  FileSystem* fs_;
  std::string dir_;
  // The previous checkpoint's file, durably retired by an exchange: the next temp file.
  std::optional<std::string> spare_;
  bool reuse_ = true;  // false once the file system or process turned out unable to reuse
};

}  // namespace topologyd::state
