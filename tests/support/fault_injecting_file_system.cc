#include "tests/support/fault_injecting_file_system.h"

#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"

namespace topologyd::state {
namespace {

absl::Status Errno(int error_number, std::string_view op, std::string_view path) {
  return absl::ErrnoToStatus(error_number, fmt::format("{} {}", op, path));
}

}  // namespace

void FaultInjectingFileSystem::FailOperation(int n, int error_number) {
  fail_at_ = n;
  fail_errno_ = error_number;
  fail_on_ = false;
}

void FaultInjectingFileSystem::FailFrom(int n, int error_number) {
  FailOperation(n, error_number);
  fail_on_ = true;
}

std::optional<absl::Status> FaultInjectingFileSystem::Tick(std::string_view op,
                                                           const std::string& path) {
  ++count_;
  if (fail_at_ == 0 || count_ < fail_at_ || (count_ > fail_at_ && !fail_on_)) {
    return std::nullopt;
  }
  return Errno(fail_errno_, fmt::format("{} (injected failure #{})", op, count_), path);
}

absl::StatusOr<std::string> FaultInjectingFileSystem::ReadFile(const std::string& path) {
  if (auto injected = Tick("read", path)) return *injected;
  return base_->ReadFile(path);
}

absl::Status FaultInjectingFileSystem::WriteNewFileAndSync(const std::string& path,
                                                           std::string_view contents, mode_t mode) {
  if (auto injected = Tick("write", path)) {
    // A short write leaves a partial file behind; the caller must clean it up.
    if (base_->WriteNewFileAndSync(path, contents.substr(0, contents.size() / 2), mode).ok()) {
      pending_.push_back({Pending::Kind::kCreate, path, "", std::nullopt});
    }
    return *injected;
  }
  TOPOLOGYD_RETURN_IF_ERROR(base_->WriteNewFileAndSync(path, contents, mode));
  pending_.push_back({Pending::Kind::kCreate, path, "", std::nullopt});
  return absl::OkStatus();
}

absl::Status FaultInjectingFileSystem::OverwriteUnsharedFileAndSync(const std::string& path,
                                                                    std::string_view contents) {
  if (auto injected = Tick("overwrite", path)) {
    // A failed overwrite leaves the file torn; its name stays.
    (void)base_->OverwriteUnsharedFileAndSync(path, contents.substr(0, contents.size() / 2));
    return *injected;
  }
  return base_->OverwriteUnsharedFileAndSync(path, contents);
}

absl::Status FaultInjectingFileSystem::Rename(const std::string& from, const std::string& to) {
  if (auto injected = Tick("rename", from)) return *injected;
  std::optional<std::string> previous;
  if (absl::StatusOr<std::string> old = base_->ReadFile(to); old.ok()) previous = *old;
  TOPOLOGYD_RETURN_IF_ERROR(base_->Rename(from, to));
  pending_.push_back({Pending::Kind::kRename, to, from, std::move(previous)});
  return absl::OkStatus();
}

absl::Status FaultInjectingFileSystem::Exchange(const std::string& a, const std::string& b) {
  if (auto injected = Tick("exchange", a)) return *injected;
  TOPOLOGYD_RETURN_IF_ERROR(base_->Exchange(a, b));
  pending_.push_back({Pending::Kind::kExchange, b, a, std::nullopt});
  return absl::OkStatus();
}

absl::Status FaultInjectingFileSystem::SyncDir(const std::string& dir) {
  if (auto injected = Tick("fsync directory", dir)) return *injected;
  TOPOLOGYD_RETURN_IF_ERROR(base_->SyncDir(dir));
  // Everything that happened in `dir` is now durable.
  std::erase_if(pending_, [&](const Pending& p) { return DirName(p.path) == dir; });
  return absl::OkStatus();
}

absl::Status FaultInjectingFileSystem::Remove(const std::string& path) {
  if (auto injected = Tick("remove", path)) return *injected;
  std::optional<std::string> previous;
  if (absl::StatusOr<std::string> old = base_->ReadFile(path); old.ok()) previous = *old;
  TOPOLOGYD_RETURN_IF_ERROR(base_->Remove(path));
  pending_.push_back({Pending::Kind::kRemove, path, "", std::move(previous)});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FaultInjectingFileSystem::ListDir(const std::string& dir) {
  if (auto injected = Tick("list directory", dir)) return *injected;
  return base_->ListDir(dir);
}

absl::Status FaultInjectingFileSystem::MakeDir(const std::string& dir, mode_t mode) {
  if (auto injected = Tick("create directory", dir)) return *injected;
  return base_->MakeDir(dir, mode);
}

absl::Status FaultInjectingFileSystem::SimulateCrash() {
  // Newest first, so each undo sees the file system as it was right after that change.
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
    const Pending& p = *it;
    switch (p.kind) {
      case Pending::Kind::kCreate: {
        absl::Status s = base_->Remove(p.path);
        if (!s.ok() && !absl::IsNotFound(s)) return s;
        break;
      }
      case Pending::Kind::kRename:
        TOPOLOGYD_RETURN_IF_ERROR(base_->Rename(p.path, p.from));
        if (p.previous) {
          TOPOLOGYD_RETURN_IF_ERROR(base_->WriteNewFileAndSync(p.path, *p.previous, 0600));
        }
        break;
      case Pending::Kind::kExchange:
        TOPOLOGYD_RETURN_IF_ERROR(base_->Exchange(p.from, p.path));
        break;
      case Pending::Kind::kRemove:
        if (p.previous) {
          TOPOLOGYD_RETURN_IF_ERROR(base_->WriteNewFileAndSync(p.path, *p.previous, 0600));
        }
        break;
    }
  }
  pending_.clear();
  return absl::OkStatus();
}

}  // namespace topologyd::state
