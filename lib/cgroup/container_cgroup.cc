#include "lib/cgroup/container_cgroup.h"

#include "fmt/format.h"

#include "lib/cgroup/naming.h"

namespace topologyd::cgroup {
namespace {

constexpr std::string_view kSliceSuffix = ".slice";

// systemd nests "a-b-c.slice" as "a.slice/a-b.slice/a-b-c.slice" ("-.slice" is the root).
absl::StatusOr<std::string> ExpandSlice(std::string_view slice) {
  if (!slice.ends_with(kSliceSuffix) || slice.size() == kSliceSuffix.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "cgroup parent \"{}\" does not end in a systemd slice (the systemd cgroup driver names "
        "pod cgroups \"kubepods-...-pod<uid>.slice\")",
        slice));
  }
  const std::string_view name = slice.substr(0, slice.size() - kSliceSuffix.size());
  if (name == "-") return std::string();
  std::string path;
  size_t start = 0;
  while (true) {
    const size_t dash = name.find('-', start);
    const size_t end = dash == std::string_view::npos ? name.size() : dash;
    if (end == start) {
      return absl::InvalidArgumentError(
          fmt::format("cgroup parent \"{}\" is not a valid systemd slice name", slice));
    }
    if (!path.empty()) path += '/';
    path += fmt::format("{}{}", name.substr(0, end), kSliceSuffix);
    if (dash == std::string_view::npos) return path;
    start = dash + 1;
  }
}

// The parent's place in the hierarchy: the path itself for cgroupfs, the expanded slice for
// systemd ("" for the root slice).
absl::StatusOr<std::string> ParentPath(std::string_view cgroup_parent, CgroupDriver driver) {
  while (cgroup_parent.starts_with('/')) cgroup_parent.remove_prefix(1);
  while (cgroup_parent.ends_with('/')) cgroup_parent.remove_suffix(1);
  if (cgroup_parent.empty()) {
    return absl::InvalidArgumentError(
        "the sandbox has no cgroup parent (linux.cgroup_parent); kubelet always names one");
  }
  if (driver == CgroupDriver::kCgroupfs) return std::string(cgroup_parent);
  const size_t slash = cgroup_parent.rfind('/');
  return ExpandSlice(slash == std::string_view::npos ? cgroup_parent
                                                     : cgroup_parent.substr(slash + 1));
}

absl::StatusOr<std::string> Validated(std::string path, std::string_view what,
                                      std::string_view cgroup_parent) {
  if (absl::Status valid = cgroup::ValidateRelativeCgroupPath(path); !valid.ok()) {
    return absl::InvalidArgumentError(fmt::format("{} from parent \"{}\": {}", what, cgroup_parent,
                                                  std::string(valid.message())));
  }
  return path;
}

}  // namespace

absl::StatusOr<std::string> ContainerCgroup(std::string_view cgroup_parent,
                                            std::string_view container_id, CgroupDriver driver,
                                            Runtime runtime) {
  if (absl::Status id = cgroup::ValidateContainerId(container_id); !id.ok()) return id;
  absl::StatusOr<std::string> parent = ParentPath(cgroup_parent, driver);
  if (!parent.ok()) return parent.status();
  const bool crio = runtime == Runtime::kCrio;
  const std::string leaf =
      driver == CgroupDriver::kCgroupfs
          ? fmt::format("{}{}", crio ? "crio-" : "", container_id)
          : fmt::format("{}-{}.scope", crio ? "crio" : "cri-containerd", container_id);
  return Validated(parent->empty() ? leaf : fmt::format("{}/{}", *parent, leaf), "container cgroup",
                   cgroup_parent);
}

absl::StatusOr<std::string> PodCgroup(std::string_view cgroup_parent, CgroupDriver driver) {
  absl::StatusOr<std::string> parent = ParentPath(cgroup_parent, driver);
  if (!parent.ok()) return parent.status();
  if (parent->empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "cgroup parent \"{}\" is the root of the hierarchy, not a pod cgroup", cgroup_parent));
  }
  return Validated(*std::move(parent), "pod cgroup", cgroup_parent);
}

}  // namespace topologyd::cgroup
