#include "lib/cgroup/cpuset_manager.h"

#include <set>
#include <sstream>
#include <utility>

#include "fmt/format.h"

#include "lib/cgroup/naming.h"
#include "lib/common/status_macros.h"

namespace topologyd::cgroup {
namespace {

constexpr std::string_view kSubtreeControl = "cgroup.subtree_control";

bool ListsWord(std::string_view text, std::string_view word) {
  std::istringstream words{std::string(text)};
  std::string w;
  while (words >> w) {
    if (w == word) return true;
  }
  return false;
}

bool Matches(const CpusetTarget& target, const CurrentCpuset& current) {
  if (!current.cpus || *current.cpus != target.cpus) return false;
  if (target.mems && (!current.mems || *current.mems != *target.mems)) return false;
  return true;
}

}  // namespace

struct CpusetManager::Prepared {
  std::vector<CpusetTarget> valid;  // registered, well-formed, present and readable
  CurrentCpusets current;
  std::vector<std::string> gone;  // registered targets whose directory is missing
};

absl::StatusOr<std::unique_ptr<CpusetManager>> CpusetManager::Open(Config config) {
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupRoot root, CgroupRoot::Open(config.root, config.resolver));
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectCgroupLayout(root, config.version));
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupRoot hierarchy, OpenHierarchy(root, layout));
  return std::make_unique<CpusetManager>(std::move(hierarchy), layout.version,
                                         std::move(config.options));
}

CpusetManager::CpusetManager(CgroupRoot hierarchy, CgroupVersion version, Options options)
    : root_(std::move(hierarchy)), version_(version), options_(std::move(options)) {}

absl::Status CpusetManager::Register(std::string_view cgroup) {
  TOPOLOGYD_RETURN_IF_ERROR(ValidateRelativeCgroupPath(cgroup));
  registered_.try_emplace(std::string(cgroup));
  return absl::OkStatus();
}

void CpusetManager::Unregister(std::string_view cgroup) {
  if (auto it = registered_.find(cgroup); it != registered_.end()) registered_.erase(it);
}

void CpusetManager::RegisterOnly(const std::vector<CpusetTarget>& desired) {
  std::set<std::string, std::less<>> wanted;
  for (const CpusetTarget& target : desired) {
    if (ValidateRelativeCgroupPath(target.cgroup).ok()) wanted.insert(target.cgroup);
  }
  std::erase_if(registered_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  for (const std::string& cgroup : wanted) registered_.try_emplace(cgroup);
}

bool CpusetManager::IsRegistered(std::string_view cgroup) const {
  return registered_.find(cgroup) != registered_.end();
}

absl::StatusOr<CurrentCpuset> CpusetManager::Read(std::string_view cgroup) const {
  TOPOLOGYD_RETURN_IF_ERROR(ValidateRelativeCgroupPath(cgroup));
  CurrentCpuset out;
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string cpus, root_.ReadFile(cgroup, "cpuset.cpus"));
  TOPOLOGYD_ASSIGN_OR_RETURN(out.cpus, CpuSet::Parse(cpus));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string mems, root_.ReadFile(cgroup, "cpuset.mems"));
  TOPOLOGYD_ASSIGN_OR_RETURN(out.mems, CpuSet::Parse(mems));
  return out;
}

absl::Status CpusetManager::Write(std::string_view cgroup, std::string_view file, std::string value,
                                  ApplyResult& result) {
  WriteRecord record{std::string(cgroup), std::string(file), std::move(value), !options_.apply,
                     absl::OkStatus()};
  if (options_.apply) record.status = root_.WriteFile(cgroup, file, record.value);
  if (record.status.ok()) {
    ++result.writes_ok;
  } else {
    ++result.writes_failed;
  }
  absl::Status status = record.status;
  if (options_.sink) options_.sink(record);
  result.writes.push_back(std::move(record));
  return status;
}

absl::Status CpusetManager::EnsureCpusetController(std::string_view cgroup, ApplyResult& result) {
  if (version_ != CgroupVersion::kV2) return absl::OkStatus();
  std::vector<std::string> ancestors = CgroupAncestors(cgroup);
  ancestors.insert(ancestors.begin(), std::string());  // the hierarchy root
  for (const std::string& ancestor : ancestors) {
    auto cached = controller_checked_.find(ancestor);
    if (cached == controller_checked_.end()) {
      absl::Status status;
      absl::StatusOr<std::string> enabled = root_.ReadFile(ancestor, kSubtreeControl);
      if (!enabled.ok()) {
        status = enabled.status();
      } else if (!ListsWord(*enabled, "cpuset")) {
        if (options_.enable_cpuset_controller) {
          status = Write(ancestor, kSubtreeControl, "+cpuset", result);
        } else {
          status = absl::FailedPreconditionError(fmt::format(
              "the cpuset controller is not enabled in {}/{}{}{}; kubelet enables it for its "
              "kubepods tree, so the path is probably not under it, or enable it there "
              "(echo +cpuset > that file)",
              root_.path(), ancestor, ancestor.empty() ? "" : "/", kSubtreeControl));
        }
      }
      cached = controller_checked_.emplace(ancestor, std::move(status)).first;
    }
    if (!cached->second.ok()) return cached->second;
  }
  return absl::OkStatus();
}

CpusetManager::Prepared CpusetManager::Prepare(const std::vector<CpusetTarget>& desired,
                                               ApplyResult& result) {
  controller_checked_.clear();
  Prepared prepared;
  std::set<std::string_view> seen;
  auto fail = [&](const CpusetTarget& target, absl::Status status) {
    result.failures.push_back({target.cgroup, std::move(status)});
  };
  for (const CpusetTarget& target : desired) {
    if (absl::Status s = ValidateRelativeCgroupPath(target.cgroup); !s.ok()) {
      fail(target, std::move(s));
      continue;
    }
    if (!seen.insert(target.cgroup).second) {
      fail(target, absl::InvalidArgumentError(
                       fmt::format("cgroup {} is listed twice in one batch", target.cgroup)));
      continue;
    }
    if (!IsRegistered(target.cgroup)) {
      fail(target, absl::FailedPreconditionError(fmt::format(
                       "cgroup {} is not registered; topologyd only writes cgroups it owns",
                       target.cgroup)));
      continue;
    }
    if (target.cpus.IsEmpty() || (target.mems && target.mems->IsEmpty())) {
      fail(target, absl::InvalidArgumentError(fmt::format(
                       "cgroup {}: an empty cpuset.{} would be refused for a cgroup with tasks",
                       target.cgroup, target.cpus.IsEmpty() ? "cpus" : "mems")));
      continue;
    }
    absl::StatusOr<EntryKind> kind = root_.Stat(target.cgroup);
    if (!kind.ok()) {
      fail(target, kind.status());
      continue;
    }
    if (*kind != EntryKind::kDirectory) {
      prepared.gone.push_back(target.cgroup);
      fail(target,
           absl::NotFoundError(fmt::format("cgroup {}/{} is gone", root_.path(), target.cgroup)));
      continue;
    }
    if (absl::Status s = EnsureCpusetController(target.cgroup, result); !s.ok()) {
      fail(target, std::move(s));
      continue;
    }
    // A dry run that "enabled" the controller cannot read files the kernel has not created;
    // the values are then unknown and the plan writes them, which is what a real run would do.
    absl::StatusOr<CurrentCpuset> current = Read(target.cgroup);
    if (!current.ok() && !(dry_run() && version_ == CgroupVersion::kV2 &&
                           current.status().code() == absl::StatusCode::kNotFound)) {
      fail(target, current.status());
      continue;
    }
    if (current.ok()) {
      if (Matches(target, *current)) ++result.unchanged;
      prepared.current.emplace(target.cgroup, *current);
    }
    prepared.valid.push_back(target);
  }
  return prepared;
}

void CpusetManager::Execute(const std::vector<CpusetWrite>& plan, ApplyResult& result) {
  std::set<std::string, std::less<>> failed;
  for (const CpusetWrite& write : plan) {
    if (failed.count(write.cgroup) != 0) {
      ++result.writes_skipped;
      continue;
    }
    absl::Status status =
        Write(write.cgroup, CpusetFileName(write.file), write.value.ToString(), result);
    if (!status.ok()) {
      failed.insert(write.cgroup);
      result.failures.push_back({write.cgroup, std::move(status)});
    }
  }
}

ApplyResult CpusetManager::Apply(const std::vector<CpusetTarget>& desired) {
  ApplyResult result;
  Prepared prepared = Prepare(desired, result);
  Execute(PlanWrites(version_, prepared.current, prepared.valid), result);
  return result;
}

std::optional<ConstrainedCgroup> CpusetManager::CheckEffective(const CpusetTarget& target) const {
  auto read = [&](std::string_view file) -> std::optional<CpuSet> {
    absl::StatusOr<std::string> text = root_.ReadFile(target.cgroup, file);
    if (!text.ok()) return std::nullopt;
    absl::StatusOr<CpuSet> set = CpuSet::Parse(*text);
    if (!set.ok()) return std::nullopt;
    return *set;
  };
  ConstrainedCgroup out{.cgroup = target.cgroup, .cpus = target.cpus, .mems = target.mems};
  bool lacking = false;
  if (std::optional<CpuSet> cpus = read("cpuset.cpus.effective")) {
    lacking = !target.cpus.IsSubsetOf(*cpus);
    out.effective_cpus = *std::move(cpus);
  }
  if (target.mems) {
    out.effective_mems = read("cpuset.mems.effective");
    lacking = lacking || (out.effective_mems && !target.mems->IsSubsetOf(*out.effective_mems));
  }
  if (!lacking) return std::nullopt;
  return out;
}

ReconcileReport CpusetManager::Reconcile(const std::vector<CpusetTarget>& desired, Timestamp now) {
  ReconcileReport report;
  Prepared prepared = Prepare(desired, report.apply);
  report.checked = static_cast<int>(prepared.valid.size());
  std::vector<std::string_view> drifted;
  for (const CpusetTarget& target : prepared.valid) {
    auto it = prepared.current.find(target.cgroup);
    if (it != prepared.current.end() && Matches(target, it->second)) {
      ++report.in_sync;
    } else {
      drifted.push_back(target.cgroup);
    }
  }
  report.drifted = static_cast<int>(drifted.size());
  Execute(PlanWrites(version_, prepared.current, prepared.valid), report.apply);
  auto failed = [&](std::string_view cgroup) {
    for (const TargetFailure& f : report.apply.failures) {
      if (f.cgroup == cgroup) return true;
    }
    return false;
  };
  if (options_.apply) {
    for (std::string_view cgroup : drifted) {
      if (!failed(cgroup)) ++report.repaired;
    }
    // v1 keeps children within their parent (it refuses the parent's narrowing, and removes
    // offlined CPUs from cpuset.cpus itself, which shows as drift): only v2 can diverge.
    if (version_ == CgroupVersion::kV2) {
      for (const CpusetTarget& target : prepared.valid) {
        if (failed(target.cgroup)) continue;
        if (std::optional<ConstrainedCgroup> c = CheckEffective(target)) {
          report.constrained.push_back(*std::move(c));
        }
      }
    }
  }
  // Present again (or still present), even where it could not be read or written this time:
  // forget any earlier absence, so a cgroup that comes and goes is not counted as missing
  // since its first disappearance.
  const std::set<std::string> gone(prepared.gone.begin(), prepared.gone.end());
  for (const CpusetTarget& target : desired) {
    if (gone.count(target.cgroup)) continue;
    if (auto it = registered_.find(target.cgroup); it != registered_.end()) it->second.reset();
  }
  for (const std::string& cgroup : prepared.gone) {
    std::optional<Timestamp>& since = registered_[cgroup];
    if (!since) since = now;
    report.gone.push_back({cgroup, *since});
  }
  return report;
}

}  // namespace topologyd::cgroup
