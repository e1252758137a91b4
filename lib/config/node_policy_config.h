// The node policy from a Config: the configuration's policy text parsed into the typed
// admission::NodeSpec, then admission::BuildNodePolicy() on this machine. Kept out of
// admission so that it links no configuration format and parses no text.
#pragma once

#include "absl/status/statusor.h"

#include "lib/admission/node_policy.h"
#include "lib/admission/node_spec.h"
#include "lib/config/config.h"
#include "lib/topology/topology.h"

namespace topologyd::config {

// Parses what the node policy reads: policy names, scope, policy options (with the feature
// gates), reserved CPUs, reserved memory and Node Allocatable quantities, device pools. Like
// kubelet, topology manager options are parsed only when some merge can happen (a policy
// other than none, or podPolicyOverride), CPU options and reserved CPUs only for the policy
// that reads them, quantities only with memoryManagerPolicy Static. INVALID_ARGUMENT with one
// line per bad key (every one, not the first), each starting with the config key, e.g.
//   topologyManagerPolicy: unknown policy: "strict"
//   cpuManagerPolicyOptions: static policy options full-pcpus-only and ... can not be used ...
//   reservedMemory[1].limits.memory: invalid quantity "1Gx": ...
[[nodiscard]] absl::StatusOr<admission::NodeSpec> ParseNodeSpec(const Config& config);

// ParseNodeSpec(), then admission::BuildNodePolicy(): every error of either.
[[nodiscard]] absl::StatusOr<admission::NodePolicy> BuildNodePolicy(
    const Config& config, const topology::Topology& topology);

}  // namespace topologyd::config
