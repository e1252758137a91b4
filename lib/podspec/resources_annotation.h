// The pod annotation `topologyd.io/resources`: the containers' resources, for a CRI relay
// that sees a pod sandbox's metadata and annotations but never its spec. A mutating webhook or
// the pod's author sets it; docs/pod-spec-sources.md is the user-facing description.
//
// The value is one JSON object (a JSON string in the annotation):
//
//   {
//     "initContainers": [                           optional; kubelet's start order
//       {"name": "setup", "requests": {"cpu": "1"}},
//       {"name": "proxy", "restartPolicy": "Always",    a sidecar
//        "requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"memory": "128Mi"}}
//     ],
//     "containers": [                               required, at least one; spec order
//       {"name": "app",
//        "requests": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"},
//        "limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}}
//     ]
//   }
//
// Rules, the same as for a Pod manifest (lib/pod/pod_manifest.h) where they overlap:
//   - no other keys at any level, and no key twice in an object;
//   - a container has "name" (a DNS label, unique across init and app containers) and may
//     have "requests" and "limits", objects mapping a resource name (validate.h
//     ValidateContainerResourceName) to a quantity written as a JSON string ("2", "1500m",
//     "1Gi"; pod.h ValidateResourceQuantity);
//   - "restartPolicy" only on init containers, and only "Always" (a sidecar, as the API server
//     allows);
//   - a missing request defaults to its limit (pod.h ApplyRequestDefaults); then a request is
//     not above its limit, and hugepages and extended resources have request == limit;
//   - at most `max_containers` containers (init and app together).
//
// Errors are INVALID_ARGUMENT naming the annotation and the JSON path, e.g.
//   annotation topologyd.io/resources: containers[1].limits.cpu: invalid quantity "x": ...
//
// Pure; thread-safe.
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
