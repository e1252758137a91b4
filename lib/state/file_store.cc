#include "lib/state/file_store.h"

#include <random>
#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"
#include "lib/state/checkpoint_codec.h"

namespace topologyd::state {
namespace {

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;

// A fresh suffix per save, so a temp file left by a crashed writer never blocks the next one
// (files are created with O_EXCL).
std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

// Errors that say this process, sandbox (seccomp, LSM) or file system cannot exchange or
// lease files at all, as opposed to a failure of this one save.
bool CannotReuse(const absl::Status& s) {
  return absl::IsUnimplemented(s) || absl::IsFailedPrecondition(s) || absl::IsPermissionDenied(s);
}

absl::Status Annotate(const absl::Status& s, std::string_view what) {
  return absl::Status(s.code(), fmt::format("{}: {}", what, s.message()));
}

}  // namespace

absl::StatusOr<CheckpointStore> CheckpointStore::Open(FileSystem* fs, std::string dir) {
  if (dir.empty()) return absl::InvalidArgumentError("state directory is empty");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // Create each missing component in turn, like `mkdir -p`.
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    absl::Status s = fs->MakeDir(dir.substr(0, slash), kDirMode);
    if (!s.ok()) return Annotate(s, "cannot create the state directory");
  }
  if (absl::Status s = fs->MakeDir(dir, kDirMode); !s.ok()) {
    return Annotate(s, "cannot create the state directory");
  }
  return CheckpointStore(fs, std::move(dir));
}

absl::Status CheckpointStore::WriteTemp(std::string_view bytes, std::string* temp) {
  bool reuse_refused = false;
  if (spare_) {
    *temp = *std::exchange(spare_, std::nullopt);
    absl::Status s = fs_->OverwriteUnsharedFileAndSync(*temp, bytes);
    if (s.ok()) return s;
    reuse_refused = CannotReuse(s);
    // Open elsewhere, gone or unwritable: drop it for a new file, so a spare never fails a
    // save and a reader holding the old checkpoint open keeps reading it whole.
    (void)fs_->Remove(*temp);
  }
  *temp = fmt::format("{}/{}{}", dir_, kTempPrefix, RandomSuffix());
  absl::Status written = fs_->WriteNewFileAndSync(*temp, bytes, kFileMode);
  // A new file written where the spare was refused: this process, sandbox or file system
  // cannot prove a file unshared, so stop keeping spares. When the new file fails too (a
  // read-only file system), this save failed and says nothing about reuse.
  if (reuse_refused && written.ok()) reuse_ = false;
  return written;
}

absl::Status CheckpointStore::Publish(const std::string& temp, bool* kept_previous) {
  *kept_previous = false;
  if (!reuse_) return fs_->Rename(temp, path());
  absl::Status exchanged = fs_->Exchange(temp, path());
  if (exchanged.ok()) {
    *kept_previous = true;
    return exchanged;
  }
  // Refused, or NOT_FOUND (no checkpoint yet): nothing happened, and the plain rename does
  // the job.
  if (!CannotReuse(exchanged) && !absl::IsNotFound(exchanged)) return exchanged;
  absl::Status renamed = fs_->Rename(temp, path());
  // Only an exchange refused where a rename succeeds shows that exchanging is unavailable
  // here; when the rename fails too (an immutable or read-only directory), this save failed.
  if (CannotReuse(exchanged) && renamed.ok()) reuse_ = false;
  return renamed;
}

absl::Status CheckpointStore::Save(const State& state) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string bytes, EncodeState(state));
  std::string temp;
  bool kept_previous = false;  // after Publish, `temp` names the previous checkpoint
  absl::Status s = WriteTemp(bytes, &temp);
  if (s.ok()) s = Publish(temp, &kept_previous);
  if (!s.ok()) {
    // The previous checkpoint is untouched; do not leave the half-written temp behind. A
    // failure to remove it is not reported over the write error: Load() sweeps leftovers.
    (void)fs_->Remove(temp);
    return Annotate(s, fmt::format("cannot save state generation {}", state.generation));
  }
  if (absl::Status synced = fs_->SyncDir(dir_); !synced.ok()) {
    // The exchange may not be durable, so on disk `temp` may still be the checkpoint: it must
    // never be overwritten. Remove the name and start the next save from a new file.
    if (kept_previous) (void)fs_->Remove(temp);
    return Annotate(
        synced, fmt::format("state generation {} written but not made durable", state.generation));
  }
  if (kept_previous) spare_ = std::move(temp);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<State>> CheckpointStore::Load() {
  // Leftover temp files are from a Save that never renamed, or retired checkpoints kept for
  // reuse; neither holds the committed state.
  spare_.reset();
  if (absl::StatusOr<std::vector<std::string>> names = fs_->ListDir(dir_); names.ok()) {
    for (const std::string& name : *names) {
      if (name.starts_with(kTempPrefix)) (void)fs_->Remove(dir_ + "/" + name);
    }
  }
  absl::StatusOr<std::string> bytes = fs_->ReadFile(path());
  if (absl::IsNotFound(bytes.status())) return std::nullopt;
  if (!bytes.ok()) {
    return Annotate(bytes.status(),
                    "cannot read the state checkpoint; topologyd does not start without it. Fix "
                    "the file's permissions or the disk, or restore the file from a backup");
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(State state, DecodeState(*bytes, path()));
  return state;
}

}  // namespace topologyd::state
