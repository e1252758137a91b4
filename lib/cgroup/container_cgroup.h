// Where the runtime puts a container's cgroup, from what the runtime's interface (CRI or NRI)
// tells a front end: the pod cgroup kubelet named in the sandbox's linux.cgroup_parent and the
// container id. topologyd binds the container to this path (relative to the cgroup hierarchy
// root), so nobody has to guess kubelet's --cgroup-root; the shim writes the pod cgroup's CFS
// quota at the path PodCgroup names.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/cgroup/types.h"

namespace topologyd::cgroup {

// cgroupfs driver: "<parent without its leading '/'>/<id>" ("crio-<id>" for CRI-O).
// systemd driver: the parent is a slice name ("kubepods-burstable-pod<uid_>.slice") or a path
// whose last component is one; the slice is expanded to its place in the tree
// ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice") and the
// container's scope appended ("cri-containerd-<id>.scope", "crio-<id>.scope").
// INVALID_ARGUMENT naming the part that is wrong for a bad id, an empty parent, a systemd
// parent that is not a slice, or a result that is not a valid relative cgroup path.
absl::StatusOr<std::string> ContainerCgroup(std::string_view cgroup_parent,
                                            std::string_view container_id, CgroupDriver driver,
                                            Runtime runtime);

// The pod cgroup itself, as ContainerCgroup() names it without the container's leaf
// ("kubepods/burstable/pod<uid>", "kubepods.slice/.../kubepods-burstable-pod<uid_>.slice").
// INVALID_ARGUMENT as above, and for systemd's root slice "-.slice" (that is no pod's cgroup).
absl::StatusOr<std::string> PodCgroup(std::string_view cgroup_parent, CgroupDriver driver);

}  // namespace topologyd::cgroup
