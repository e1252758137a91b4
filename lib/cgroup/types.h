// Vocabulary of the cgroup adapter: which cgroup version and driver a node uses, the kubelet
// QoS classes and container runtimes that decide a container's cgroup name, and the cpuset
// values topologyd wants a cgroup to hold.
//
// Everything here is a plain value type; no I/O. Safe to share between threads as const.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/cpuset/cpuset.h"

namespace topologyd::cgroup {

// The cgroup hierarchy that carries the cpuset controller. A "hybrid" node (v2 mounted at
// <root>/unified, v1 controllers beside it) is kV1 when cpuset is bound to the v1 side.
enum class CgroupVersion { kV1, kV2 };

// What `cgroup.version` in the config asks for: detect at start, or insist on one version.
enum class CgroupVersionSetting { kAuto, kV1, kV2 };

// kubelet's --cgroup-driver. It decides how pod and container cgroups are named.
enum class CgroupDriver { kCgroupfs, kSystemd };

// The pod's QoS class as kubelet computes it; it decides the pod cgroup's parent.
enum class QosClass { kGuaranteed, kBurstable, kBestEffort };

// The CRI runtime; it decides the container cgroup's leaf name.
enum class Runtime { kContainerd, kCrio };

// The two cpuset interface files topologyd writes. Same names in v1 and v2.
enum class CpusetFile { kCpus, kMems };

// "cpuset.cpus" / "cpuset.mems".
std::string_view CpusetFileName(CpusetFile file);

// Parsers for config values. INVALID_ARGUMENT lists the accepted spellings.
absl::StatusOr<CgroupVersionSetting> ParseCgroupVersionSetting(
    std::string_view text);                                             // auto|v1|v2
absl::StatusOr<CgroupDriver> ParseCgroupDriver(std::string_view text);  // cgroupfs|systemd
absl::StatusOr<QosClass> ParseQosClass(std::string_view text);  // Guaranteed|Burstable|BestEffort
absl::StatusOr<Runtime> ParseRuntime(std::string_view text);    // containerd|cri-o (or crio)

std::string_view ToString(CgroupVersion version);  // "v1" / "v2"
std::string_view ToString(CgroupDriver driver);    // "cgroupfs" / "systemd"
std::string_view ToString(Runtime runtime);        // "containerd" / "cri-o"

// What one cgroup should hold. `cgroup` is relative to the cpuset hierarchy root (see
// CgroupRoot), e.g. "kubepods/burstable/pod<uid>/<id>". `cpus` must not be empty (a cgroup
// with tasks cannot have an empty cpuset). `mems` unset means "topologyd does not manage
// memory nodes for this cgroup": cpuset.mems is neither written nor compared.
struct CpusetTarget {
  std::string cgroup;
  CpuSet cpus;
  std::optional<CpuSet> mems;
};

// The cpuset values found in (or believed to be in) one cgroup; unset = unknown.
struct CurrentCpuset {
  std::optional<CpuSet> cpus;
  std::optional<CpuSet> mems;
};

}  // namespace topologyd::cgroup
