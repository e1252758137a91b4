// kubelet's CFS quota rule for exclusive CPUs (DisableCPUQuotaWithExclusiveCPUs), as the shim
// applies it: topologyd decides which containers it covers (ContainerAllocation's
// cpu_quota_unlimited, docs/api.md), the shim writes the quota kubelet's static policy would
// have into what kubelet sends and into the pod cgroup kubelet created.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/cgroup/types.h"

namespace topologyd::shim {

// The CFS quota to forward where kubelet sent `kubelet_quota` (a container's resources, or the
// sandbox's), `unlimited` being topologyd's word for the container (for a sandbox: for any
// container of the pod). -1 where kubelet enforces a quota (it sent one, as with its default
// cpuCFSQuota), as kubelet's calculateLinuxResources does; otherwise kubelet's value.
int64_t ForwardedCpuQuota(bool unlimited, int64_t kubelet_quota);

// One write into a cgroup's interface file.
struct CgroupFileWrite {
  std::string file;
  std::string value;
  friend bool operator==(const CgroupFileWrite&, const CgroupFileWrite&) = default;
};

// What makes a pod cgroup's CFS quota unlimited, as kubelet's pod container manager creates it
// for a pod with exclusive CPUs. v1: "-1" into cpu.cfs_quota_us. v2: "max <period>" into
// cpu.max, the period kept from `cpu_max` (the file's content now, "<quota|max> <period>";
// read for v2 only). INVALID_ARGUMENT when `cpu_max` does not parse.
absl::StatusOr<CgroupFileWrite> UnlimitedQuotaWrite(cgroup::CgroupVersion version,
                                                    std::string_view cpu_max = {});

}  // namespace topologyd::shim
