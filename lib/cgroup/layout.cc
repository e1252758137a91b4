#include "lib/cgroup/layout.h"

#include <sstream>

#include "fmt/format.h"

#include "lib/common/status_macros.h"

namespace topologyd::cgroup {
namespace {

absl::StatusOr<bool> IsFile(const CgroupRoot& root, std::string_view dir, std::string_view name) {
  TOPOLOGYD_ASSIGN_OR_RETURN(EntryKind kind, root.Stat(dir, name));
  return kind == EntryKind::kFile;
}

absl::StatusOr<bool> ListsCpuset(const CgroupRoot& root, std::string_view dir) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string controllers, root.ReadFile(dir, "cgroup.controllers"));
  std::istringstream words(controllers);
  std::string word;
  while (words >> word) {
    if (word == "cpuset") return true;
  }
  return false;
}

absl::StatusOr<CgroupLayout> DetectV1(const CgroupRoot& root, bool* found) {
  *found = true;
  TOPOLOGYD_ASSIGN_OR_RETURN(bool at_root, IsFile(root, "", "cpuset.cpus"));
  if (at_root) return CgroupLayout{CgroupVersion::kV1, "", false};
  TOPOLOGYD_ASSIGN_OR_RETURN(bool below, IsFile(root, "cpuset", "cpuset.cpus"));
  if (below) {
    TOPOLOGYD_ASSIGN_OR_RETURN(bool unified, IsFile(root, "unified", "cgroup.controllers"));
    return CgroupLayout{CgroupVersion::kV1, "cpuset", unified};
  }
  *found = false;
  return CgroupLayout{};
}

absl::StatusOr<CgroupLayout> DetectV2(const CgroupRoot& root, bool* found) {
  *found = true;
  TOPOLOGYD_ASSIGN_OR_RETURN(bool unified_root, IsFile(root, "", "cgroup.controllers"));
  if (unified_root) {
    TOPOLOGYD_ASSIGN_OR_RETURN(bool cpuset, ListsCpuset(root, ""));
    if (!cpuset) {
      return absl::FailedPreconditionError(fmt::format(
          "{}/cgroup.controllers does not list cpuset: the cpuset controller is not available "
          "in this cgroup v2 hierarchy (bound to a v1 mount, or not delegated)",
          root.path()));
    }
    return CgroupLayout{CgroupVersion::kV2, "", false};
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(bool hybrid, IsFile(root, "unified", "cgroup.controllers"));
  if (hybrid) {
    TOPOLOGYD_ASSIGN_OR_RETURN(bool cpuset, ListsCpuset(root, "unified"));
    if (cpuset) return CgroupLayout{CgroupVersion::kV2, "unified", true};
  }
  *found = false;
  return CgroupLayout{};
}

}  // namespace

absl::StatusOr<CgroupLayout> DetectCgroupLayout(const CgroupRoot& root,
                                                CgroupVersionSetting setting) {
  bool found = false;
  // v2 first for kAuto: a unified root is unambiguous, and on hybrid nodes DetectV2 only
  // claims the unified mount when cpuset is bound to it (then no v1 cpuset mount exists).
  if (setting != CgroupVersionSetting::kV1) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectV2(root, &found));
    if (found) return layout;
  }
  if (setting != CgroupVersionSetting::kV2) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectV1(root, &found));
    if (found) return layout;
  }
  std::string_view looked_for =
      setting == CgroupVersionSetting::kV1   ? "cpuset.cpus or cpuset/cpuset.cpus (v1)"
      : setting == CgroupVersionSetting::kV2 ? "cgroup.controllers or unified/cgroup.controllers "
                                               "listing cpuset (v2)"
                                             : "cgroup.controllers (v2), cpuset.cpus or "
                                               "cpuset/cpuset.cpus (v1)";
  return absl::FailedPreconditionError(
      fmt::format("no cpuset cgroup hierarchy under {}: looked for {}", root.path(), looked_for));
}

absl::StatusOr<CgroupVersion> DetectCgroupVersion(const std::string& root) {
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupRoot opened, CgroupRoot::Open(root));
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectCgroupLayout(opened));
  return layout.version;
}

}  // namespace topologyd::cgroup
