// What kubelet (cgroupfs driver, cgroup v1, CPU manager policy "none", CFS quota on) puts in
// the CRI requests for a pod: LinuxContainerResources per container, the pod-level resources
// of the sandbox, and the pod cgroup by QoS class with its CFS quota. Pure functions of the pod
// and the node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/pod/pod.h"

#include "cri/v1/runtime.pb.h"

namespace topologyd::testing::containerd {

struct NodeFacts {
  int64_t memory_capacity_bytes = 0;
  // The host's huge page sizes in KiB, ascending (/sys/kernel/mm/hugepages).
  std::vector<uint64_t> huge_page_sizes_kib;
};

// MemTotal and the huge page sizes of this host.
NodeFacts ReadNodeFacts();

inline constexpr int64_t kCpuPeriod = 100000;  // kubelet's default CFS period, in us
inline constexpr int64_t kGuaranteedOomScoreAdj = -997;
inline constexpr int64_t kBestEffortOomScoreAdj = 1000;

// kubelet's MilliCPUToShares: 2 for 0, at least 2, at most 262144.
int64_t MilliCpuToShares(int64_t milli);
// kubelet's milliCPUToQuota: 0 (no limit) for 0, at least 1000 us.
int64_t MilliCpuToQuota(int64_t milli, int64_t period);
// kubelet's GetContainerOOMScoreAdjust for an ordinary pod (not node-critical): Guaranteed
// -997, BestEffort 1000, Burstable 1000 - 1000 * request / capacity within [3, 999].
int64_t OomScoreAdj(pod::QosClass qos, int64_t memory_request, int64_t memory_capacity);
// "2MB", "1GB": the page size spelling of the CRI's HugepageLimit.
std::string HugePageSizeName(uint64_t size_kib);

// The resources kubelet sends for `container` of `pod` (requests defaulted already):
// cpu_period, cpu_quota, cpu_shares, memory limit, oom_score_adj, a hugepage limit per host
// page size (0 unless the container's limits name it), swap limit = memory limit (cgroup v1).
// cpuset_cpus and cpuset_mems stay empty, as with the CPU manager policy "none".
runtime::v1::LinuxContainerResources ContainerResources(const pod::Pod& pod,
                                                        const pod::Container& container,
                                                        const NodeFacts& node);
// The pod-level resources of RunPodSandbox (cpu and memory of the effective pod requests and
// limits, overhead excluded).
runtime::v1::LinuxContainerResources SandboxResources(const pod::Pod& pod);

// The CFS quota kubelet's pod container manager gives the pod cgroup it creates before the
// sandbox (ResourceConfigForPod, CFS quota enforced; with its managers off kubelet knows of no
// exclusive CPUs): the quota of the pod's CPU limit for a Guaranteed pod, and for a Burstable
// one whose every container has a CPU limit; nullopt (no quota) otherwise.
std::optional<int64_t> PodCpuQuota(const pod::Pod& pod);

// The pod cgroup kubelet's cgroupfs driver uses, under `root` (e.g. "/topologyd-test-1-0";
// "" is kubelet's own layout): root/kubepods/pod<uid> for Guaranteed,
// root/kubepods/burstable/pod<uid>, root/kubepods/besteffort/pod<uid>.
std::string PodCgroupParent(const std::string& root, pod::QosClass qos, const std::string& uid);

}  // namespace topologyd::testing::containerd
