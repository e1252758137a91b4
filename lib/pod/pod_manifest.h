// ParsePodManifest(): a Kubernetes Pod manifest (YAML or JSON text) -> pod::Pod; ParsePodSpec(): the
// same for a PodSpec alone (the topologyd.io/resources annotation).
//
// Reads metadata.{uid,name,namespace,annotations} and, for spec.initContainers and
// spec.containers, name, restartPolicy and resources.{requests,limits}; everything else
// (images, commands, volumes, status, ...) is ignored. Requests are then defaulted from limits
// as the API server does (pod.h ApplyRequestDefaults), so the result is what kubelet would see.
//
// The checks the API server would apply and kubelet relies on are enforced: names as over gRPC
// (validate.h: pod name a DNS subdomain, namespace and container names DNS labels, uid 1 to 64
// of [A-Za-z0-9-], annotation keys qualified names, annotations at most 256 KiB together,
// resource names the API server's container resources), at most `max_containers` containers
// (init and app; the configuration's limits.containersPerPod), containers present and uniquely
// named, quantities valid and passing ValidateResourceQuantity (pod.h: not negative, extended
// resources whole numbers, hugepages a multiple of the page size), a request not above its
// limit, extended resources and hugepages with request == limit, restartPolicy one of Always /
// Never / OnFailure (only Always makes an init container a sidecar). Pod-level
// `spec.resources` is refused (kubelet's static managers skip such pods; topologyd does not
// model them). The text must hold one document (later empty ones, e.g. a trailing "---", are
// fine) and no mapping may repeat a key, in YAML and in JSON alike.
//
// Errors are INVALID_ARGUMENT whose message starts with the field path, e.g.
//   spec.containers[1].resources.limits.cpu: invalid quantity "abc": ...
// or, for text that is not YAML/JSON (including text on which yaml-cpp cannot read on: "not a
// YAML document"), a duplicate key or a second document, with "line L, column C:".
// metadata.uid may be absent (empty uid); callers that key state by uid must check it.
// namespace defaults to "default" when absent or empty.
//
// Pure apart from yaml-cpp (no file or network access): callers read the file. Thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/pod/pod.h"
#include "lib/pod/validate.h"

namespace topologyd::pod {

absl::StatusOr<Pod> ParsePodManifest(std::string_view text,
                                     size_t max_containers = kDefaultMaxContainersPerPod);

// A PodSpec alone (YAML or JSON: `initContainers` and `containers`, each container's name,
// restartPolicy and resources; everything else ignored), read with the same rules as a
// manifest's spec, into `identity` (uid, namespace, name and annotations, which the caller has
// checked). Paths in errors start at the spec ("containers[0].resources.limits.cpu: ...").
absl::StatusOr<Pod> ParsePodSpec(std::string_view text, Pod identity,
                                 size_t max_containers = kDefaultMaxContainersPerPod);

}  // namespace topologyd::pod
