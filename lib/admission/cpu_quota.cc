#include "lib/admission/cpu_quota.h"

namespace topologyd::admission {

bool CpuQuotaUnlimited(bool disable_cpu_quota_with_exclusive_cpus,
                       const state::ContainerRecord& container) {
  // kubelet asks its CPU manager's state for the container's CPUs; only the static policy's
  // exclusive assignments are kept there.
  return disable_cpu_quota_with_exclusive_cpus && container.exclusive && !container.cpus.IsEmpty();
}

}  // namespace topologyd::admission
