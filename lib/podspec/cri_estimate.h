// A container's resources estimated from what CRI carries: the pod's QoS class from the
// sandbox's cgroup parent, and the container's requests and limits from its Linux resources,
// by inverting kubelet's conversion (kuberuntime's calculateLinuxResources and
// GetHugepageLimitsFromResources). The last resort when neither the resources annotation nor
// the API server gives the pod spec; docs/pod-spec-sources.md has the table of what is exact.
//
// The estimate is built so that pod.h ComputeQos of a pod of estimated containers agrees with
// the cgroup's QoS class:
//   Guaranteed  requests = limits = {cpu, memory, hugepages-*}
//   Burstable   requests = {cpu, hugepages-*}, limits = {hugepages-*}: the cpu request from
//               the shares, or 1m when they carry none (shares 2 is also what 1m and 2m give),
//               since a container without a cpu or memory request reads as BestEffort; no cpu
//               or memory limits, so that the pod never looks Guaranteed
//   BestEffort  hugepages-* only (they do not count for the QoS class)
//
// Plain values (no protobuf), so that this stays pure; the CRI relay copies the fields.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/pod/pod.h"

namespace topologyd::podspec {

// kubelet's constants (pkg/kubelet/cm helpers_linux.go).
inline constexpr int64_t kMinShares = 2;
inline constexpr int64_t kMaxShares = 262144;
inline constexpr int64_t kSharesPerCpu = 1024;
inline constexpr int64_t kMinQuotaPeriod = 1000;  // the smallest quota kubelet writes, in us

// CRI's LinuxContainerResources, the fields that matter here.
struct HugepageLimit {
  std::string page_size;  // kubelet's spelling: "2MB", "1GB", "64KB"
  uint64_t limit = 0;     // bytes; 0 for a size the container does not request
};
struct CriResources {
  int64_t cpu_period = 0;  // us
  int64_t cpu_quota = 0;   // us; 0 or -1: no limit
  int64_t cpu_shares = 0;
  int64_t memory_limit_in_bytes = 0;  // 0: no limit
  int64_t oom_score_adj = 0;
  std::string cpuset_cpus;
  std::string cpuset_mems;
  std::vector<HugepageLimit> hugepage_limits;
};

// The QoS class in kubelet's pod cgroup name (cgroups-per-qos), for either cgroup driver,
// with or without a --cgroup-root prefix:
//   cgroupfs  [<root>]/kubepods/pod<uid>                 Guaranteed
//             [<root>]/kubepods/burstable/pod<uid>       Burstable
//             [<root>]/kubepods/besteffort/pod<uid>      BestEffort
//   systemd   [/<root>.slice]/[<root>-]kubepods.slice/[<root>-]kubepods-pod<uid_>.slice
//             .../[<root>-]kubepods-burstable.slice/[<root>-]kubepods-burstable-pod<uid_>.slice
//             and the same with besteffort; the last component alone is enough.
// nullopt when the path is not one of these (e.g. kubelet runs with cgroups-per-qos off).
std::optional<pod::QosClass> QosFromCgroupParent(std::string_view cgroup_parent);

// "2MB" -> "hugepages-2Mi", "1GB" -> "hugepages-1Gi", "64KB" -> "hugepages-64Ki" (kubelet's
// HugePageUnitSizeFromByteSize inverted: B, KB, MB, GB, TB, PB are powers of 1024); nullopt
// when `page_size` is not "<positive integer><unit>".
std::optional<std::string> HugePageResourceName(std::string_view page_size);

struct Estimate {
  pod::Container container;
  // What the estimate could not know or knows only roughly, one short sentence each, for users.
  std::vector<std::string> unknown;
};

// The container `name` of a pod of class `qos`, from its CRI resources. Exact inversions:
//   cpu request  ceil(shares * 1000 / 1024) millicores, for shares 3 to 262143; shares 2 is
//                what no request, 1m and 2m all give (Guaranteed: 2m, Burstable: 1m); shares
//                262144 means 256 CPUs or more (256 taken, and said in `unknown`)
//   cpu limit    ceil(quota * 1000 / period) millicores when both are positive (exact above the
//                kernel's minimum quota of 1000us; at it, the shares decide when they can)
//   memory       the limit in bytes (0: none)
//   hugepages    each non-zero limit, as request and limit
// `unknown` always says that extended resources (device-plugin resources never reach CRI) and
// whether the container is an init container are not known.
Estimate EstimateContainer(std::string name, const CriResources& resources, pod::QosClass qos);

}  // namespace topologyd::podspec
