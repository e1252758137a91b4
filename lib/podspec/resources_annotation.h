// The pod annotation `topologyd.io/resources`: the containers' resources, for a CRI relay
// that sees a pod sandbox's metadata and annotations but never its spec. A mutating webhook or
// the pod's author sets it; docs/pod-spec-sources.md is the user-facing description.
//
// The value is the pod's spec, or the part of it that decides placement: `initContainers` and
// `containers`, each container with its `name`, `restartPolicy` and `resources` exactly as in
// the Pod (so a webhook can copy them; every other field is ignored). JSON or YAML:
//
//   {"initContainers": [{"name": "setup", "resources": {"requests": {"cpu": "1"}}},
//                       {"name": "proxy", "restartPolicy": "Always",
//                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
//    "containers": [{"name": "app",
//                    "resources": {"limits": {"cpu": "2", "memory": "1Gi",
//                                             "nvidia.com/gpu": "1"}}}]}
//
// It is read by the manifest parser's own rules (lib/pod/pod_manifest.h ParsePodSpec): names,
// resource names and quantities checked, requests defaulted from limits, a request not above
// its limit, no key twice, at most `max_containers` containers. Errors are INVALID_ARGUMENT
// naming the annotation and the path, e.g.
//   annotation topologyd.io/resources: containers[1].resources.limits.cpu: invalid quantity ...
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/pod/pod.h"

namespace topologyd::podspec {

inline constexpr std::string_view kResourcesAnnotation = "topologyd.io/resources";

// The pod `namespace_name`/`name` with `uid` and `annotations` (all of them, kept in the Pod)
// and the containers of the resources annotation; nullopt when `annotations` has no
// kResourcesAnnotation. uid, namespace, name and annotation keys are checked as the manifest
// parser checks them (validate.h), errors prefixed metadata.uid, metadata.namespace, ...
absl::StatusOr<std::optional<pod::Pod>> PodFromResourcesAnnotation(
    std::string_view uid, std::string_view namespace_name, std::string_view name,
    const std::map<std::string, std::string>& annotations, size_t max_containers);

}  // namespace topologyd::podspec
