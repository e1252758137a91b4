#include "shim/pod_cgroup_quota.h"

#include "lib/cgroup/layout.h"
#include "lib/common/status_macros.h"
#include "lib/shim/cpu_quota.h"

namespace topologyd::shim {

absl::StatusOr<std::unique_ptr<PodCgroupQuota>> PodCgroupQuota::Open(
    const std::string& root, cgroup::CgroupVersionSetting version) {
  TOPOLOGYD_ASSIGN_OR_RETURN(cgroup::CgroupRoot opened, cgroup::CgroupRoot::Open(root));
  TOPOLOGYD_ASSIGN_OR_RETURN(cgroup::CgroupLayout layout, cgroup::DetectCpuLayout(opened, version));
  TOPOLOGYD_ASSIGN_OR_RETURN(cgroup::CgroupRoot hierarchy, cgroup::OpenHierarchy(opened, layout));
  return std::unique_ptr<PodCgroupQuota>(new PodCgroupQuota(std::move(hierarchy), layout.version));
}

absl::Status PodCgroupQuota::Lift(std::string_view pod_cgroup) const {
  std::string cpu_max;
  if (version_ == cgroup::CgroupVersion::kV2) {
    TOPOLOGYD_ASSIGN_OR_RETURN(cpu_max, hierarchy_.ReadFile(pod_cgroup, "cpu.max"));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(CgroupFileWrite write, UnlimitedQuotaWrite(version_, cpu_max));
  return hierarchy_.WriteFile(pod_cgroup, write.file, write.value);
}

}  // namespace topologyd::shim
