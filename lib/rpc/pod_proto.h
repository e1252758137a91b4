// Conversion between pod::Pod and its topologyd.v1.Pod proto form.
//
// PodFromProto() is the daemon's gate for pods arriving over gRPC, so it is strict: pod uids
// and names end up in state files and cgroup paths, and a request the manifest parser
// (lib/pod/pod_manifest.h) would refuse must not get in through the RPC either. It checks:
//   - uid: required, [A-Za-z0-9-]{1,64};
//   - name: required, a Kubernetes DNS subdomain (lower-case alphanumerics, '-' and '.',
//     at most 253 characters); namespace: a DNS label (empty means "default");
//   - annotation keys: Kubernetes qualified names ([prefix/]name); keys and values at most
//     256 KiB together, the API server's bound;
//   - containers: at most `max_containers`, init and app together (the configuration's
//     limits.containersPerPod), checked first; at least one app container; every name a DNS label
//     ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters), unique across init and app
//     containers; restart_policy empty, "Always", "Never" or "OnFailure";
//   - resources: names pass the API server's rule for container resources
//     (pod::ValidateContainerResourceName: cpu, memory, ephemeral-storage, hugepages-<size>,
//     or <domain>/<name>), quantities parse (lib/pod/quantity.h) and pass
//     pod::ValidateResourceQuantity (not negative, extended resources whole numbers, hugepages
//     a multiple of the page size), a request is not above its limit, hugepages and extended
//     resources have request == limit.
// Missing requests are then defaulted from limits (pod::ApplyRequestDefaults), as the API
// server does, so the result is what kubelet would see.
//
// Errors are INVALID_ARGUMENT whose message starts with the field path in proto terms:
//   pod.uid: required
//   pod.containers[1].requests["cpu"]: invalid quantity "x": ...
//   pod.init_containers[0].name: duplicate container name "setup"
// Values from the request are quoted with QuoteForMessage (lib/common/quote.h): escaped and
// shortened, so a huge field cannot push the reply past the gRPC metadata limit.
//
// PodToProto() writes quantities with Quantity::ToString(), which parses back to the same
// value, and restart_policy "Always" for sidecar init containers only; so for any pod that
// PodFromProto() accepts, PodFromProto(PodToProto(p)) == p.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"

#include "lib/pod/pod.h"
#include "lib/pod/validate.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

void PodToProto(const pod::Pod& in, topologyd::v1::Pod* out);

// INVALID_ARGUMENT naming the field (see above) for a pod the daemon must not accept.
absl::StatusOr<pod::Pod> PodFromProto(const topologyd::v1::Pod& in,
                                      size_t max_containers = pod::kDefaultMaxContainersPerPod);

}  // namespace topologyd::rpc
