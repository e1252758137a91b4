#include "lib/cgroup/layout.h"

#include <span>
#include <sstream>
#include <string_view>

#include "fmt/format.h"

#include "lib/common/status_macros.h"

namespace topologyd::cgroup {
namespace {

absl::StatusOr<bool> IsFile(const CgroupRoot& root, std::string_view dir, std::string_view name) {
  TOPOLOGYD_ASSIGN_OR_RETURN(EntryKind kind, root.Stat(dir, name));
  return kind == EntryKind::kFile;
}

// A controller as the layouts show it: in v2 by name in cgroup.controllers, in v1 by an
// interface file at the root of its mount, which is the root itself or one of `v1_mounts`.
struct Controller {
  std::string_view name;
  std::string_view v1_file;
  std::span<const std::string_view> v1_mounts;
};

constexpr std::string_view kCpusetMounts[] = {"cpuset"};
constexpr Controller kCpuset{"cpuset", "cpuset.cpus", kCpusetMounts};
// systemd's mount first: "cpu" is usually a symlink to it.
constexpr std::string_view kCpuMounts[] = {"cpu,cpuacct", "cpuacct,cpu", "cpu"};
constexpr Controller kCpu{"cpu", "cpu.cfs_quota_us", kCpuMounts};

absl::StatusOr<bool> ListsController(const CgroupRoot& root, std::string_view dir,
                                     std::string_view controller) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string controllers, root.ReadFile(dir, "cgroup.controllers"));
  std::istringstream words(controllers);
  std::string word;
  while (words >> word) {
    if (word == controller) return true;
  }
  return false;
}

absl::StatusOr<CgroupLayout> DetectV1(const CgroupRoot& root, const Controller& controller,
                                      bool* found) {
  *found = true;
  TOPOLOGYD_ASSIGN_OR_RETURN(bool at_root, IsFile(root, "", controller.v1_file));
  if (at_root) return CgroupLayout{CgroupVersion::kV1, "", false};
  for (std::string_view mount : controller.v1_mounts) {
    absl::StatusOr<CgroupRoot> hierarchy = root.OpenMount(mount);
    if (hierarchy.status().code() == absl::StatusCode::kNotFound) continue;
    if (!hierarchy.ok()) return hierarchy.status();
    TOPOLOGYD_ASSIGN_OR_RETURN(bool below, IsFile(*hierarchy, "", controller.v1_file));
    if (!below) continue;
    TOPOLOGYD_ASSIGN_OR_RETURN(bool unified, IsFile(root, "unified", "cgroup.controllers"));
    return CgroupLayout{CgroupVersion::kV1, std::string(mount), unified};
  }
  *found = false;
  return CgroupLayout{};
}

absl::StatusOr<CgroupLayout> DetectV2(const CgroupRoot& root, const Controller& controller,
                                      bool* found) {
  *found = true;
  TOPOLOGYD_ASSIGN_OR_RETURN(bool unified_root, IsFile(root, "", "cgroup.controllers"));
  if (unified_root) {
    TOPOLOGYD_ASSIGN_OR_RETURN(bool listed, ListsController(root, "", controller.name));
    if (!listed) {
      return absl::FailedPreconditionError(
          fmt::format("{}/cgroup.controllers does not list {}: the {} controller is not available "
                      "in this cgroup v2 hierarchy (bound to a v1 mount, or not delegated)",
                      root.path(), controller.name, controller.name));
    }
    return CgroupLayout{CgroupVersion::kV2, "", false};
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(bool hybrid, IsFile(root, "unified", "cgroup.controllers"));
  if (hybrid) {
    TOPOLOGYD_ASSIGN_OR_RETURN(bool listed, ListsController(root, "unified", controller.name));
    if (listed) return CgroupLayout{CgroupVersion::kV2, "unified", true};
  }
  *found = false;
  return CgroupLayout{};
}

absl::StatusOr<CgroupLayout> DetectLayout(const CgroupRoot& root, const Controller& controller,
                                          CgroupVersionSetting setting) {
  bool found = false;
  // v2 first for kAuto: a unified root is unambiguous, and on hybrid nodes DetectV2 only
  // claims the unified mount when the controller is bound to it (then no v1 mount has it).
  if (setting != CgroupVersionSetting::kV1) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectV2(root, controller, &found));
    if (found) return layout;
  }
  if (setting != CgroupVersionSetting::kV2) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectV1(root, controller, &found));
    if (found) return layout;
  }
  std::string v1_files(controller.v1_file);
  for (std::string_view mount : controller.v1_mounts) {
    v1_files += fmt::format(" or {}/{}", mount, controller.v1_file);
  }
  const std::string v2_files =
      fmt::format("cgroup.controllers or unified/cgroup.controllers listing {}", controller.name);
  const std::string looked_for = setting == CgroupVersionSetting::kV1
                                     ? fmt::format("{} (v1)", v1_files)
                                 : setting == CgroupVersionSetting::kV2
                                     ? fmt::format("{} (v2)", v2_files)
                                     : fmt::format("cgroup.controllers (v2), {} (v1)", v1_files);
  return absl::FailedPreconditionError(fmt::format("no {} cgroup hierarchy under {}: looked for {}",
                                                   controller.name, root.path(), looked_for));
}

}  // namespace

absl::StatusOr<CgroupLayout> DetectCgroupLayout(const CgroupRoot& root,
                                                CgroupVersionSetting setting) {
  return DetectLayout(root, kCpuset, setting);
}

absl::StatusOr<CgroupLayout> DetectCpuLayout(const CgroupRoot& root, CgroupVersionSetting setting) {
  return DetectLayout(root, kCpu, setting);
}

absl::StatusOr<CgroupRoot> OpenHierarchy(const CgroupRoot& root, const CgroupLayout& layout) {
  return layout.hierarchy.empty() ? root.OpenSubtree("") : root.OpenMount(layout.hierarchy);
}

absl::StatusOr<CgroupVersion> DetectCgroupVersion(const std::string& root) {
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupRoot opened, CgroupRoot::Open(root));
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupLayout layout, DetectCgroupLayout(opened));
  return layout.version;
}

}  // namespace topologyd::cgroup
