#include "shim/placement_resources.h"

#include "lib/shim/cpu_quota.h"

namespace topologyd::shim {

void ApplyPlacement(const Placement& placement, runtime::v1::LinuxContainerResources* resources) {
  resources->set_cpuset_cpus(placement.cpus);
  if (!placement.mems.empty()) resources->set_cpuset_mems(placement.mems);
  resources->set_cpu_quota(
      ForwardedCpuQuota(placement.cpu_quota_unlimited, resources->cpu_quota()));
}

void ApplyPodQuota(bool pod_unlimited, runtime::v1::PodSandboxConfig* config) {
  if (!config->linux().has_resources()) return;
  runtime::v1::LinuxContainerResources* resources = config->mutable_linux()->mutable_resources();
  resources->set_cpu_quota(ForwardedCpuQuota(pod_unlimited, resources->cpu_quota()));
}

}  // namespace topologyd::shim
