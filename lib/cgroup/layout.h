// Cgroup layout detection: where, below the configured cgroup root, the hierarchy that carries
// the cpuset controller lives, and which cgroup version it is.
//
// Recognised layouts (R = the configured root, e.g. /sys/fs/cgroup):
//   v2 unified:  R/cgroup.controllers exists                        -> v2, hierarchy ""
//   v1:          R/cpuset.cpus exists (R is the cpuset mount)        -> v1, hierarchy ""
//   v1 / hybrid: R/cpuset/cpuset.cpus exists (R is the v1 tmpfs)     -> v1, hierarchy "cpuset"
//                (hybrid = R/unified/cgroup.controllers also exists)
//   hybrid, cpuset bound to v2: R/unified/cgroup.controllers lists "cpuset" and no v1 cpuset
//                                                                    -> v2, hierarchy "unified"
// For v2 the hierarchy's cgroup.controllers must list "cpuset", else FAILED_PRECONDITION.
// With an explicit setting (v1/v2) only the layouts of that version are considered.
//
// Detection reads through a CgroupRoot, so it is confined like everything else. Thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "lib/cgroup/cgroup_root.h"
#include "lib/cgroup/types.h"

namespace topologyd::cgroup {

struct CgroupLayout {
  CgroupVersion version = CgroupVersion::kV2;
  // Directory of the hierarchy relative to the configured root: "" or "unified", or a v1
  // mount ("cpuset", "cpu,cpuacct": open it with CgroupRoot::OpenMount). Container cgroup
  // paths are relative to this directory.
  std::string hierarchy;
  // v1 controllers and a v2 mount side by side under the root.
  bool hybrid = false;
};

// FAILED_PRECONDITION when no cpuset hierarchy of the requested version is found (the message
// says what was looked for); INVALID_ARGUMENT when the tree contains symlinks on those paths.
absl::StatusOr<CgroupLayout> DetectCgroupLayout(
    const CgroupRoot& root, CgroupVersionSetting setting = CgroupVersionSetting::kAuto);

// The same for the cpu controller, whose CFS quota files (cpu.cfs_quota_us in v1, cpu.max in
// v2) the kubelet shim writes:
//   v2 unified:  R/cgroup.controllers exists, must list "cpu"     -> v2, hierarchy ""
//   v1:          R/cpu.cfs_quota_us exists (R is the cpu mount)   -> v1, hierarchy ""
//   v1 / hybrid: R/D/cpu.cfs_quota_us for D in "cpu,cpuacct", "cpuacct,cpu", "cpu"
//                                                                 -> v1, hierarchy D
//                (systemd mounts "cpu,cpuacct" and links "cpu" to it: the mount is found
//                by its own name before the link, which is refused like any symlink)
//   hybrid, cpu bound to v2: R/unified/cgroup.controllers lists "cpu" -> v2, hierarchy "unified"
// Errors as DetectCgroupLayout's.
absl::StatusOr<CgroupLayout> DetectCpuLayout(
    const CgroupRoot& root, CgroupVersionSetting setting = CgroupVersionSetting::kAuto);

// The hierarchy `layout` found below `root`, confined like `root`.
absl::StatusOr<CgroupRoot> OpenHierarchy(const CgroupRoot& root, const CgroupLayout& layout);

// Convenience: opens `root` and returns the detected version.
absl::StatusOr<CgroupVersion> DetectCgroupVersion(const std::string& root);

}  // namespace topologyd::cgroup
