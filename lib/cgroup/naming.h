// Cgroup names: validation of caller-supplied names and kubelet's naming of pod and
// container cgroups for both cgroup drivers.
//
// Validation is the first line of confinement: every cgroup path that reaches CgroupRoot has
// passed ValidateRelativeCgroupPath, so it cannot contain "..", an absolute prefix, empty
// components or control bytes. (CgroupRoot additionally refuses symlinks at resolution time.)
//
// kubelet's layout, for pod uid U and container id C (the part under the hierarchy root):
//
//   driver    QoS          pod cgroup                                                 leaf
//   cgroupfs  Guaranteed   kubepods/podU                                               C | crio-C
//   cgroupfs  Burstable    kubepods/burstable/podU                                     C | crio-C
//   cgroupfs  BestEffort   kubepods/besteffort/podU                                    C | crio-C
//   systemd   Guaranteed   kubepods.slice/kubepods-podU_.slice                         scope
//   systemd   Burstable    kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podU_.slice
//   systemd   BestEffort   kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podU_.slice
//
// U_ is U with '-' replaced by '_' (systemd reserves '-' as the slice nesting separator);
// the systemd leaf is "cri-containerd-C.scope" (containerd) or "crio-C.scope" (cri-o).
// This assumes kubelet's default --cgroup-root ("/"), i.e. "kubepods" directly under the root.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/cgroup/types.h"

namespace topologyd::cgroup {

// Longest accepted relative cgroup path and component (Linux NAME_MAX).
inline constexpr size_t kMaxCgroupPathLength = 4096;
inline constexpr size_t kMaxComponentLength = 255;

// A container id as the CRI reports it: 1..200 characters of [A-Za-z0-9._:-], not "." or "..".
// INVALID_ARGUMENT otherwise (the message escapes odd bytes).
absl::Status ValidateContainerId(std::string_view id);

// A pod uid: a UUID (8-4-4-4-12 hex digits, as the API server assigns) or 32 hex digits (the
// hash kubelet gives static pods). INVALID_ARGUMENT otherwise.
absl::Status ValidatePodUid(std::string_view uid);

// A cgroup path relative to the hierarchy root: '/'-separated, non-empty components of
// [A-Za-z0-9._:@-] (plus '_', which systemd names use), none "." or "..", no leading or
// trailing '/', no "//", at most kMaxCgroupPathLength bytes. The empty path (the root itself)
// is refused: topologyd never writes the root cgroup. INVALID_ARGUMENT otherwise.
absl::Status ValidateRelativeCgroupPath(std::string_view path);

// One file name inside a cgroup directory (e.g. "cpuset.cpus"): a single valid component.
absl::Status ValidateCgroupFileName(std::string_view name);

// The pod-level cgroup kubelet creates for this pod, relative to the hierarchy root.
// INVALID_ARGUMENT for a bad uid.
absl::StatusOr<std::string> PodCgroupPath(CgroupDriver driver, QosClass qos,
                                          std::string_view pod_uid);

// The container's cgroup, relative to the hierarchy root. INVALID_ARGUMENT for a bad uid or id.
absl::StatusOr<std::string> ContainerCgroupPath(CgroupDriver driver, QosClass qos,
                                                std::string_view pod_uid,
                                                std::string_view container_id, Runtime runtime);

// The strict ancestors of a valid relative path, outermost first ("a/b/c" -> "a", "a/b").
std::vector<std::string> CgroupAncestors(std::string_view path);

// True when `ancestor` is a strict ancestor of `path` ("a" of "a/b", not of "ab").
bool IsCgroupAncestor(std::string_view ancestor, std::string_view path);

// Number of components of a valid relative path.
int CgroupDepth(std::string_view path);

}  // namespace topologyd::cgroup
