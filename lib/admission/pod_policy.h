// The topology manager policy and scope one pod is admitted with: the node's, or — when the
// node allows it (`podPolicyOverride: true`) — the ones the pod asks for with the annotations
//   topologyd.io/topology-policy: none | best-effort | restricted | single-numa-node
//   topologyd.io/topology-scope:  container | pod
// kubelet has no per-pod policy (its documentation lists it as future work).
//
// Rules (docs/admission.md, "Per-pod policy override"):
//   - override off: the annotations are ignored; the pod is admitted with the node's policy
//     and scope, and a note in the explanation says so (never a rejection);
//   - override on: any valid value replaces the node's for this pod only; the node's policy
//     options (prefer-closest-numa-nodes) still apply where the chosen policy uses them;
//   - override on and a value that is not a policy/scope name: the pod is rejected with reason
//     InvalidTopologyPolicyAnnotation, naming the annotation, its value and the accepted ones.
// Values are matched exactly (kubelet's spellings; no case folding, no whitespace trimming).
//
// Pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/admission/node_policy.h"
#include "lib/hints/policy.h"
#include "lib/pod/pod.h"

namespace topologyd::admission {

struct PodPolicy {
  hints::Policy policy = hints::Policy::kNone;
  Scope scope = Scope::kContainer;
  // Human-readable notes about where the policy came from (annotation used / ignored).
  std::vector<std::string> notes;
  // Set when the pod must be rejected (reason kInvalidTopologyPolicyAnnotation).
  std::optional<std::string> invalid_annotation_message;
};

PodPolicy ResolvePodPolicy(const NodePolicy& node, const pod::Pod& pod);

}  // namespace topologyd::admission
