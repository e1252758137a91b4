// The API server's rules for the names in a Pod, shared by the manifest parser
// (pod_manifest.h) and the gRPC conversion (lib/rpc/pod_proto.h) so that both refuse the same
// pods with the same words.
//
// Each returns OK or INVALID_ARGUMENT with the reason only; callers prefix the field path. An
// empty value is refused ("required"); callers for which a field is optional skip the check
// when it is absent. The checks of scalar fields quote the value in the message; those of map
// keys do not, as callers show the key, quoted, in the field path.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"

#include "lib/pod/pod.h"

namespace topologyd::pod {

// The API server's bound on metadata.annotations: keys and values together, in bytes
// (TotalAnnotationSizeLimitB).
inline constexpr size_t kMaxAnnotationsBytes = 256 * 1024;
// The default of the configuration key limits.containersPerPod (docs/configuration.md).
inline constexpr size_t kDefaultMaxContainersPerPod = 256;

// metadata.uid: 1 to 64 of [A-Za-z0-9-] (names.h IsApiPodUid).
absl::Status ValidatePodUid(std::string_view uid);
// metadata.name: a DNS subdomain.
absl::Status ValidatePodName(std::string_view name);
// metadata.namespace: a DNS label.
absl::Status ValidateNamespace(std::string_view namespace_name);
// A container's (init or app) name: a DNS label.
absl::Status ValidateContainerName(std::string_view name);
// A key of metadata.annotations: a qualified name, upper-case letters allowed in the prefix
// too (the API server lower-cases the key before checking it).
absl::Status ValidateAnnotationKey(std::string_view key);
// metadata.annotations as a whole: keys and values at most kMaxAnnotationsBytes together.
absl::Status ValidateAnnotationsSize(const std::map<std::string, std::string>& annotations);
// A key of a container's resources.requests / limits, by the API server's rule
// (validateContainerResourceName): a qualified name; without a prefix, one of the standard
// container resources cpu, memory, ephemeral-storage or hugepages-<size>; with a prefix
// outside kubernetes.io, an extended resource name (not "requests."-prefixed, and still a
// qualified name as the quota name "requests.<name>"). Names containing "kubernetes.io/"
// are native and pass, as they do there. The reason names `container`.
absl::Status ValidateContainerResourceName(std::string_view container, std::string_view name);
// A pod's init and app containers together, against the node's bound (a configuration key,
// limits.containersPerPod): admission work grows with the count.
absl::Status ValidateContainerCount(size_t count, size_t max);
// One container's requests against its limits, by the API server's rules that kubelet's
// managers rely on: a request not above its limit; hugepages and extended resources need a
// limit, equal to the request. For requests already defaulted from limits (ApplyRequestDefaults)
// or not. Unlike the checks above, the message starts with the field, "<requests_path>.<name>: ".
absl::Status ValidateRequestsAgainstLimits(const ResourceList& requests, const ResourceList& limits,
                                           std::string_view requests_path);

}  // namespace topologyd::pod
