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

#include <string_view>

#include "absl/status/status.h"

namespace topologyd::pod {

// metadata.uid: 1 to 64 of [A-Za-z0-9-] (names.h IsApiPodUid).
absl::Status ValidatePodUid(std::string_view uid);
// metadata.name: a DNS subdomain.
absl::Status ValidatePodName(std::string_view name);
// metadata.namespace: a DNS label.
absl::Status ValidateNamespace(std::string_view namespace_name);
// A container's (init or app) name: a DNS label.
absl::Status ValidateContainerName(std::string_view name);
// A key of metadata.annotations: a qualified name.
absl::Status ValidateAnnotationKey(std::string_view key);
// A key of resources.requests / limits: a qualified name.
absl::Status ValidateResourceName(std::string_view name);

}  // namespace topologyd::pod
