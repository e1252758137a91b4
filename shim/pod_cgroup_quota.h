// PodCgroupQuota: lifts a pod cgroup's CFS quota, as kubelet's pod container manager creates
// the pod cgroup of a pod with exclusive CPUs (DisableCPUQuotaWithExclusiveCPUs). kubelet, its
// managers off, cannot know which pods those are and gives the pod cgroup the quota of the
// pod's limits; topologyd knows, and the shim writes what kubelet's static policy would have.
//
// The cpu controller's hierarchy is found once below the configured cgroup root, as topologyd
// finds its cpuset hierarchy (lib/cgroup/layout.h), and every access stays beneath it
// (lib/cgroup/cgroup_root.h): no symlink is followed and no path leaves it.
//
// Thread-safe: const after Open.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/cgroup/cgroup_root.h"
#include "lib/cgroup/types.h"

namespace topologyd::shim {

class PodCgroupQuota {
 public:
  // Opens `root` and finds the cpu controller's hierarchy of `version` under it.
  // FAILED_PRECONDITION (or the open's error) naming what was looked for.
  static absl::StatusOr<std::unique_ptr<PodCgroupQuota>> Open(const std::string& root,
                                                              cgroup::CgroupVersionSetting version);

  // Makes the CFS quota of `pod_cgroup` (relative to the hierarchy, as PodCgroup() names it)
  // unlimited: v1 cpu.cfs_quota_us -1, v2 cpu.max "max <its period>". NOT_FOUND when the pod
  // cgroup does not exist; otherwise CgroupRoot's errors.
  absl::Status Lift(std::string_view pod_cgroup) const;

  cgroup::CgroupVersion version() const { return version_; }
  // The hierarchy's directory, for messages.
  const std::string& path() const { return hierarchy_.path(); }

 private:
  PodCgroupQuota(cgroup::CgroupRoot hierarchy, cgroup::CgroupVersion version)
      : hierarchy_(std::move(hierarchy)), version_(version) {}

  cgroup::CgroupRoot hierarchy_;
  cgroup::CgroupVersion version_;
};

}  // namespace topologyd::shim
