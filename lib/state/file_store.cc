#include "lib/state/file_store.h"

#include <random>
#include <utility>

#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"
#include "lib/state/checkpoint_codec.h"

#include "fmt/format.h"

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

absl::Status CheckpointStore::Save(const State& state) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string bytes, EncodeState(state));
  const std::string temp = fmt::format("{}/{}{}", dir_, kTempPrefix, RandomSuffix());
  absl::Status s = fs_->WriteNewFileAndSync(temp, bytes, kFileMode);
  if (s.ok()) s = fs_->Rename(temp, path());
  if (!s.ok()) {
    // The previous checkpoint is untouched; do not leave the half-written temp behind. A
    // failure to remove it is not reported over the write error: Load() sweeps leftovers.
    (void)fs_->Remove(temp);
    return Annotate(s, fmt::format("cannot save state generation {}", state.generation));
  }
  if (absl::Status synced = fs_->SyncDir(dir_); !synced.ok()) {
    return Annotate(
        synced, fmt::format("state generation {} written but not made durable", state.generation));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<State>> CheckpointStore::Load() {
  // Leftover temp files are from a Save that never renamed; they hold nothing committed.
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
