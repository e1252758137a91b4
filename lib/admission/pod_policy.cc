#include "lib/admission/pod_policy.h"

#include "fmt/format.h"

#include "lib/admission/reasons.h"
#include "lib/common/quote.h"

namespace topologyd::admission {

PodPolicy ResolvePodPolicy(const NodePolicy& node, const pod::Pod& pod) {
  PodPolicy out{.policy = node.policy,
                .scope = node.scope,
                .notes = {},
                .invalid_annotation_message = std::nullopt};
  const auto policy_it = pod.annotations.find(std::string(kPolicyAnnotation));
  const auto scope_it = pod.annotations.find(std::string(kScopeAnnotation));
  const bool has_policy = policy_it != pod.annotations.end();
  const bool has_scope = scope_it != pod.annotations.end();
  if (!has_policy && !has_scope) return out;

  if (!node.pod_policy_override) {
    // Ignoring (rather than rejecting) keeps a pod that carries the annotation runnable on
    // nodes that do not honour it, exactly as on a plain kubelet.
    if (has_policy) {
      out.notes.push_back(fmt::format(
          "annotation {}={} ignored: this node does not allow per-pod policies "
          "(podPolicyOverride: false); node policy {} used",
          kPolicyAnnotation, QuoteForMessage(policy_it->second), hints::PolicyName(node.policy)));
    }
    if (has_scope) {
      out.notes.push_back(
          fmt::format("annotation {}={} ignored: this node does not allow per-pod policies "
                      "(podPolicyOverride: false); node scope {} used",
                      kScopeAnnotation, QuoteForMessage(scope_it->second), ScopeName(node.scope)));
    }
    return out;
  }

  if (has_policy) {
    absl::StatusOr<hints::Policy> parsed = hints::ParsePolicy(policy_it->second);
    if (!parsed.ok()) {
      out.invalid_annotation_message = fmt::format(
          "annotation {}: unknown policy {} (expected none, best-effort, restricted or "
          "single-numa-node)",
          kPolicyAnnotation, QuoteForMessage(policy_it->second));
      return out;
    }
    out.policy = *parsed;
    out.notes.push_back(fmt::format("policy {} from annotation {} (node policy {})",
                                    hints::PolicyName(out.policy), kPolicyAnnotation,
                                    hints::PolicyName(node.policy)));
  }
  if (has_scope) {
    const std::string& value = scope_it->second;
    if (value != "container" && value != "pod") {
      out.invalid_annotation_message =
          fmt::format("annotation {}: unknown scope {} (expected container or pod)",
                      kScopeAnnotation, QuoteForMessage(value));
      return out;
    }
    out.scope = value == "pod" ? Scope::kPod : Scope::kContainer;
    out.notes.push_back(fmt::format("scope {} from annotation {} (node scope {})",
                                    ScopeName(out.scope), kScopeAnnotation, ScopeName(node.scope)));
  }
  return out;
}

}  // namespace topologyd::admission
