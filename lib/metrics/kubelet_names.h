// The names, help texts and buckets of kubelet's own metrics that topologyd exports, as
// kubelet's pkg/kubelet/metrics/metrics.go defines them. kubelet registers them under the
// subsystem "kubelet", so that prefix is part of every exposed name; dashboards and alerts
// written for kubelet's /metrics therefore work unchanged. Some break Prometheus' naming
// conventions (a counter ending in _count, a histogram in milliseconds): they are kubelet's,
// kept as they are (docs/operations.md, "Metrics").
#pragma once

#include <string_view>
#include <vector>

namespace topologyd::metrics::kubelet {

inline constexpr std::string_view kAdmissionRequests =
    "kubelet_topology_manager_admission_requests_total";
inline constexpr std::string_view kAdmissionErrors =
    "kubelet_topology_manager_admission_errors_total";
inline constexpr std::string_view kAdmissionDuration =
    "kubelet_topology_manager_admission_duration_ms";
inline constexpr std::string_view kCpuPinningRequests =
    "kubelet_cpu_manager_pinning_requests_total";
inline constexpr std::string_view kCpuPinningErrors = "kubelet_cpu_manager_pinning_errors_total";
inline constexpr std::string_view kMemoryPinningRequests =
    "kubelet_memory_manager_pinning_requests_total";
inline constexpr std::string_view kMemoryPinningErrors =
    "kubelet_memory_manager_pinning_errors_total";
inline constexpr std::string_view kAligned = "kubelet_container_aligned_compute_resources_count";
inline constexpr std::string_view kAlignedFailures =
    "kubelet_container_aligned_compute_resources_failure_count";
inline constexpr std::string_view kSharedPoolMillicores =
    "kubelet_cpu_manager_shared_pool_size_millicores";
inline constexpr std::string_view kExclusiveCpus =
    "kubelet_cpu_manager_exclusive_cpu_allocation_count";
inline constexpr std::string_view kAllocationPerNuma = "kubelet_cpu_manager_allocation_per_numa";

// The aligned-compute counters' labels and their values (kubelet's AlignScope*, Aligned*).
inline constexpr std::string_view kScopeLabel = "scope";
inline constexpr std::string_view kBoundaryLabel = "boundary";
inline constexpr std::string_view kScopeContainer = "container";
inline constexpr std::string_view kScopePod = "pod";
inline constexpr std::string_view kBoundaryNumaNode = "numa_node";
inline constexpr std::string_view kBoundaryPhysicalCpu = "physical_cpu";

// kubelet's ExponentialBuckets(.05, 2, 15), in milliseconds.
std::vector<double> AdmissionDurationBucketsMs();

}  // namespace topologyd::metrics::kubelet
