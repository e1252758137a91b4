// What topologyd's placement puts into the CRI requests the shim forwards: the container's
// cpuset and memory nodes, and the CFS quota kubelet's static policy would have sent for a
// container or sandbox with exclusive CPUs (lib/shim/cpu_quota.h). The rest of what kubelet
// sent is left as it is.
//
// Pure functions of the messages; thread-safe.
#pragma once

#include "cri/v1/runtime.pb.h"
#include "shim/allocation_cache.h"

namespace topologyd::shim {

// cpuset_cpus, cpuset_mems (when topologyd pins memory) and cpu_quota of `resources`.
void ApplyPlacement(const Placement& placement, runtime::v1::LinuxContainerResources* resources);

// The sandbox's pod-level cpu_quota, `pod_unlimited` being whether a container of the pod runs
// without a CFS quota (AllocationCache::PodCpuQuotaUnlimited). A config without resources
// stays without.
void ApplyPodQuota(bool pod_unlimited, runtime::v1::PodSandboxConfig* config);

}  // namespace topologyd::shim
