// kubelet's CFS quota rule for exclusive CPUs (feature gate DisableCPUQuotaWithExclusiveCPUs,
// Beta and on by default since v1.33). With the gate on, kubelet's static CPU manager policy
// runs a container the CPU manager assigned CPUs to (ContainerHasExclusiveCPUs) with cpu_quota
// -1, and a pod with any such init or app container (PodHasExclusiveCPUs) with an unlimited
// sandbox and pod cgroup quota: pinned CPUs are the container's alone, so a quota would only
// throttle it (kuberuntime_container_linux.go, kuberuntime_sandbox_linux.go,
// pod_container_manager_linux.go).
//
// Pure functions; thread-safe.
#pragma once

#include "lib/state/state.h"

namespace topologyd::admission {

// Whether kubelet would run `container` without a CFS quota: the gate is on and the container
// holds exclusive CPUs. A pod runs without one when any of its containers does.
bool CpuQuotaUnlimited(bool disable_cpu_quota_with_exclusive_cpus,
                       const state::ContainerRecord& container);

}  // namespace topologyd::admission
