// The reason strings an admission rejection carries. They are kubelet's where kubelet has one
// (pkg/kubelet/cm/topologymanager and the CPU manager's SMTAlignmentError), so that tooling
// written against kubelet's pod status keeps working; topologyd adds its own for the per-pod
// annotations kubelet does not have (policy override, NUMA split).
#pragma once

#include <string_view>

namespace topologyd::admission {

// The topology manager's merge did not admit the container (restricted / single-numa-node
// without a preferred hint). Message starts with kubelet's text kTopologyAffinityMessage.
inline constexpr std::string_view kTopologyAffinityError = "TopologyAffinityError";
inline constexpr std::string_view kTopologyAffinityMessage =
    "Resources cannot be allocated with Topology locality";

// full-pcpus-only refused the CPU request (the CPU manager's own error type).
inline constexpr std::string_view kSmtAlignmentError = "SMTAlignmentError";

// Any other provider failure (not enough free CPUs, devices or memory inside the placement,
// memory group rules, ...). Message starts with kubelet's "Allocate failed due to <err>, which
// is unexpected".
inline constexpr std::string_view kUnexpectedAdmissionError = "UnexpectedAdmissionError";

// topologyd only: a `topologyd.io/topology-policy` or `topologyd.io/topology-scope` annotation
// with a value that is not a policy / scope name, on a node that honours the annotations.
inline constexpr std::string_view kInvalidTopologyPolicyAnnotation =
    "InvalidTopologyPolicyAnnotation";

// The per-pod annotations (honoured only with `podPolicyOverride: true`).
inline constexpr std::string_view kPolicyAnnotation = "topologyd.io/topology-policy";
inline constexpr std::string_view kScopeAnnotation = "topologyd.io/topology-scope";

// topologyd only: a pod that asks to be split over N NUMA nodes (the annotations below;
// docs/admission.md, "Pods split over N NUMA nodes") with annotations that do not add up, or
// that no N nodes of this machine can hold. The message names the annotation, or each NUMA
// node and what it lacked.
inline constexpr std::string_view kNumaSplitError = "NUMASplitError";

// The split annotations, honoured on every node (they change nothing for pods without them).
inline constexpr std::string_view kNumaNodesAnnotation = "topologyd.io/numa-nodes";
inline constexpr std::string_view kNumaPlacementAnnotation = "topologyd.io/numa-placement";
// Followed by the cell index: topologyd.io/numa-cpus.0, topologyd.io/numa-mem.1, ...
inline constexpr std::string_view kNumaCpusAnnotationPrefix = "topologyd.io/numa-cpus.";
inline constexpr std::string_view kNumaMemAnnotationPrefix = "topologyd.io/numa-mem.";

}  // namespace topologyd::admission
