// What the kernel says about a container's process: the CPUs it may run on and its cgroups,
// read from /proc and the cgroup mounts; and removal of a test's cgroup directories.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::testing::containerd {

// Cpus_allowed_list of /proc/<pid>/status, e.g. "1" or "0-1".
absl::StatusOr<std::string> CpusAllowedList(pid_t pid);

// The directory of the cgroup v1 hierarchy with `controller` (e.g. "cpuset") that `pid` is
// in: its path in /proc/<pid>/cgroup under that hierarchy's mount point.
absl::StatusOr<std::string> CgroupDir(pid_t pid, const std::string& controller);

// Where the cgroup v1 hierarchy with `controller` (e.g. "cpu") is mounted here, e.g.
// "/sys/fs/cgroup/cpu,cpuacct"; NOT_FOUND on a host without one (cgroup v2).
absl::StatusOr<std::string> V1MountPoint(const std::string& controller);

// The trimmed content of dir/file, e.g. ReadCgroupValue(dir, "cpuset.cpus").
absl::StatusOr<std::string> ReadCgroupValue(const std::string& dir, const std::string& file);
absl::Status WriteCgroupValue(const std::string& dir, const std::string& file,
                              const std::string& value);

// Mount points of every cgroup hierarchy (v1 and the v2 "unified" one) visible here.
std::vector<std::string> CgroupMountPoints();

// Removes the cgroup directories at and under `path` (absolute in the hierarchies, e.g.
// "/topologyd-test-12-0") in every hierarchy, deepest first. Retries for up to `patience` while
// a directory is busy (a process still exiting). Refuses "" and "/". Errors name what stayed.
absl::Status RemoveCgroupTree(const std::string& path, std::chrono::milliseconds patience);

}  // namespace topologyd::testing::containerd
