#include "lib/shim/container_cgroup.h"

#include "fmt/format.h"

#include "lib/cgroup/naming.h"

namespace topologyd::shim {
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

}  // namespace

absl::StatusOr<std::string> ContainerCgroup(std::string_view cgroup_parent,
                                            std::string_view container_id,
                                            cgroup::CgroupDriver driver, cgroup::Runtime runtime) {
  if (absl::Status id = cgroup::ValidateContainerId(container_id); !id.ok()) return id;
  while (cgroup_parent.starts_with('/')) cgroup_parent.remove_prefix(1);
  while (cgroup_parent.ends_with('/')) cgroup_parent.remove_suffix(1);
  if (cgroup_parent.empty()) {
    return absl::InvalidArgumentError(
        "the sandbox has no cgroup parent (linux.cgroup_parent); kubelet always names one");
  }
  std::string path;
  if (driver == cgroup::CgroupDriver::kCgroupfs) {
    path = fmt::format("{}/{}{}", cgroup_parent, runtime == cgroup::Runtime::kCrio ? "crio-" : "",
                       container_id);
  } else {
    const size_t slash = cgroup_parent.rfind('/');
    const std::string_view last =
        slash == std::string_view::npos ? cgroup_parent : cgroup_parent.substr(slash + 1);
    absl::StatusOr<std::string> slices = ExpandSlice(last);
    if (!slices.ok()) return slices.status();
    const std::string scope = fmt::format(
        "{}-{}.scope", runtime == cgroup::Runtime::kCrio ? "crio" : "cri-containerd", container_id);
    path = slices->empty() ? scope : fmt::format("{}/{}", *slices, scope);
  }
  if (absl::Status valid = cgroup::ValidateRelativeCgroupPath(path); !valid.ok()) {
    return absl::InvalidArgumentError(fmt::format("container cgroup from parent \"{}\": {}",
                                                  cgroup_parent, std::string(valid.message())));
  }
  return path;
}

}  // namespace topologyd::shim
