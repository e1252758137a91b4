#include "lib/admission/admission.h"

#include <set>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/admission/hint_text.h"
#include "lib/admission/numa_split.h"
#include "lib/admission/numa_split_request.h"
#include "lib/admission/pod_policy.h"
#include "lib/admission/provider.h"
#include "lib/admission/reasons.h"
#include "lib/admission/running_alongside.h"
#include "lib/common/absl_fmt.h"

namespace topologyd::admission {
namespace {

// A provider failure, as kubelet's admission reports it.
struct Failure {
  std::string reason;
  std::string message;
};

// A provider's allocation failure, with where it happened after kubelet's text.
Failure AllocationFailure(const NodePolicy& node, std::string_view container,
                          const Provider& provider, const hints::TopologyHint& hint,
                          const ProviderFailure& failure) {
  const std::string where = fmt::format(" (container \"{}\", {} manager, topology hint {})",
                                        container, provider.manager(), HintText(hint, node.numa));
  if (failure.message_is_reason) return Failure{failure.reason, failure.message + where};
  const std::string lead = failure.summary.empty() ? "" : failure.summary + "; kubelet: ";
  return Failure{failure.reason, fmt::format("{}Allocate failed due to {}, which is unexpected{}",
                                             lead, failure.message, where)};
}

// Why a merge did not admit, in words.
std::string AffinityMessage(const NodePolicy& node, const MergeStep& step, hints::Policy policy) {
  const std::string who =
      step.container.has_value() ? fmt::format("container \"{}\"", *step.container) : "pod";
  std::string why;
  if (policy == hints::Policy::kSingleNumaNode) {
    why = "no single NUMA node suits every resource";
  } else {
    why = fmt::format("no NUMA placement is preferred by every resource (best: {})",
                      HintText(step.merged.hint, node.numa));
  }
  std::vector<std::string> parts;
  for (const ProviderHintsEntry& p : step.providers) {
    if (!p.hints.has_value() || p.hints->empty()) continue;  // no preference: not the cause
    parts.push_back(ProviderHintsText(p.provider, p.hints, node.numa));
  }
  return fmt::format("{}: {} (policy {}): {}{}{}", kTopologyAffinityMessage, who,
                     hints::PolicyName(policy), why, parts.empty() ? "" : "; ",
                     fmt::join(parts, "; "));
}

// A merge given up at its limits, in words: kubelet's text first, like every
// TopologyAffinityError (which kubelet's shims already handle), then the sizes.
std::string TooComplexMessage(const MergeStep& step, hints::Policy policy) {
  const std::string who =
      step.container.has_value() ? fmt::format("container \"{}\"", *step.container) : "pod";
  return fmt::format("{}: {} (policy {}): the NUMA placement is too complex to decide: {}",
                     kTopologyAffinityMessage, who, hints::PolicyName(policy), step.limit_error);
}

// The step's merge within `limits`, recorded in `step`; the failure when it does not admit.
std::optional<Failure> RunMerge(const NodePolicy& node, hints::Policy policy,
                                const hints::MergeLimits& limits, MergeStep& step) {
  hints::MergeInput input;
  input.num_nodes = node.num_nodes();
  input.distances = node.distances;
  input.policy = policy;
  input.options = node.options;
  for (const ProviderHintsEntry& p : step.providers) {
    input.providers.push_back(p.hints);
    input.provider_names.push_back(p.provider);
  }
  absl::StatusOr<hints::MergeResult> merged = hints::MergeWithin(input, limits);
  if (!merged.ok()) {
    // Only RESOURCE_EXHAUSTED is possible: the input is the node's own, already validated.
    // No hint at all is better than a guessed one, even under best-effort.
    step.merged = hints::MergeResult{hints::TopologyHint{std::nullopt, false}, false};
    step.limit_error = std::string(merged.status().message());
    return Failure{std::string(kTopologyAffinityError), TooComplexMessage(step, policy)};
  }
  step.merged = *merged;
  if (!step.merged.admit) {
    return Failure{std::string(kTopologyAffinityError), AffinityMessage(node, step, policy)};
  }
  return std::nullopt;
}

// Collects one provider's hints, or the failure kubelet would end up reporting.
std::optional<Failure> Collect(std::string_view container, const Provider& provider,
                               absl::StatusOr<hints::ProviderHints> hints, MergeStep& step) {
  if (!hints.ok()) {
    // kubelet's providers log such errors and answer "no preference"; the allocation then
    // fails with the same error, which is the rejection kubelet ends up with.
    return Failure{std::string(kUnexpectedAdmissionError),
                   fmt::format("Allocate failed due to {}, which is unexpected (container \"{}\", "
                               "{} manager, while computing hints)",
                               hints.status().message(), container, provider.manager())};
  }
  step.providers.push_back(ProviderHintsEntry{std::string(provider.name()), *std::move(hints)});
  return std::nullopt;
}

class Admission {
 public:
  Admission(const NodePolicy& node, const AllocationState& state, const pod::Pod& pod,
            const AdmitOptions& options)
      : node_(node),
        options_(options),
        pod_(pod),
        state_(state),
        order_(pod::StartOrder(pod)),
        guaranteed_(pod::ComputeQos(pod) == pod::QosClass::kGuaranteed),
        alongside_(order_, HeldCpus()) {}

  AdmissionResult Run(const AllocationState& original) {
    const PodPolicy policy = ResolvePodPolicy(node_, pod_);
    result_.explanation.policy = policy.policy;
    result_.explanation.scope = policy.scope;
    result_.explanation.notes = policy.notes;
    std::optional<Failure> failure;
    if (HasNumaSplitAnnotations(pod_)) {
      // The split replaces the hint merge: the pod's policy and scope play no part.
      result_.explanation.policy = node_.policy;
      result_.explanation.scope = node_.scope;
      result_.explanation.notes.clear();
      failure = RunNumaSplit();
    } else if (policy.invalid_annotation_message.has_value()) {
      failure = Failure{std::string(kInvalidTopologyPolicyAnnotation),
                        *policy.invalid_annotation_message};
    } else if (policy.policy == hints::Policy::kNone) {
      result_.explanation.notes.push_back(
          "topology manager policy none: no hints collected, nothing merged; every container "
          "is allocated without NUMA affinity");
      failure = RunNone();
    } else if (policy.scope == Scope::kPod) {
      failure = RunPodScope(policy.policy);
    } else {
      failure = RunContainerScope(policy.policy);
    }
    if (failure.has_value()) {
      result_.admitted = false;
      result_.reason = std::move(failure->reason);
      result_.message = std::move(failure->message);
      result_.containers.clear();
      result_.new_state = original;  // all-or-nothing: nothing of this admission is kept
      return std::move(result_);
    }
    result_.admitted = true;
    Describe();
    result_.new_state = std::move(state_);
    return std::move(result_);
  }

 private:
  std::optional<Failure> RunNumaSplit() {
    SplitAdmission split = AdmitNumaSplit(node_, state_, pod_, order_, guaranteed_);
    Explanation& e = result_.explanation;
    e.notes.insert(e.notes.end(), split.notes.begin(), split.notes.end());
    e.numa_split = std::move(split.split);
    if (split.failure.has_value()) {
      return Failure{std::move(split.failure->first), std::move(split.failure->second)};
    }
    const hints::TopologyHint hint{node_.numa.Mask(split.nodes), true};
    for (const pod::OrderedContainer& c : order_) affinity_[c.spec->name] = hint;
    return std::nullopt;
  }

  std::optional<Failure> RunNone() {
    for (size_t i = 0; i < order_.size(); ++i) {
      if (auto f = Allocate(i, hints::TopologyHint{})) return f;
    }
    return std::nullopt;
  }

  std::optional<Failure> RunContainerScope(hints::Policy policy) {
    for (size_t i = 0; i < order_.size(); ++i) {
      const std::string& name = order_[i].spec->name;
      MergeStep& step = result_.explanation.merges.emplace_back();
      step.container = name;
      const ContainerContext context = ContextFor(i);
      for (const Provider* provider : Providers()) {
        if (auto f =
                Collect(name, *provider, provider->ContainerHints(node_, state_, context), step)) {
          return f;
        }
      }
      if (auto f = RunMerge(node_, policy, options_.merge_limits, step)) return f;
      if (auto f = Allocate(i, step.merged.hint)) return f;
    }
    return std::nullopt;
  }

  std::optional<Failure> RunPodScope(hints::Policy policy) {
    MergeStep& step = result_.explanation.merges.emplace_back();
    const PodContext context{.pod = pod_, .order = order_, .guaranteed = guaranteed_};
    for (const Provider* provider : Providers()) {
      if (auto f = Collect("(pod)", *provider, provider->PodHints(node_, state_, context), step)) {
        return f;
      }
    }
    if (auto f = RunMerge(node_, policy, options_.merge_limits, step)) return f;
    const hints::TopologyHint hint = step.merged.hint;
    for (size_t i = 0; i < order_.size(); ++i) {
      if (auto f = Allocate(i, hint)) return f;
    }
    return std::nullopt;
  }

  // The exclusive CPUs each container holds before this admission (a pod admitted again
  // keeps them).
  std::vector<CpuSet> HeldCpus() const {
    std::vector<CpuSet> held(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) {
      if (const state::ContainerRecord record = Holdings(order_[i]); record.exclusive) {
        held[i] = record.cpus;
      }
    }
    return held;
  }

  // What container `c` holds in the working state, as the providers describe it.
  state::ContainerRecord Holdings(const pod::OrderedContainer& c) const {
    state::ContainerRecord record;
    record.name = c.spec->name;
    record.init = c.role != pod::ContainerRole::kApp;
    record.restartable = c.role == pod::ContainerRole::kSidecar;
    for (const Provider* provider : Providers()) {
      provider->Describe(node_, state_, pod_.uid, record);
    }
    return record;
  }

  ContainerContext ContextFor(size_t i) const {
    return ContainerContext{.pod = pod_,
                            .container = order_[i],
                            .guaranteed = guaranteed_,
                            .held_alongside = alongside_.For(i)};
  }

  // Every provider's Allocate for container `i`, in registration order; the first failure wins
  // (kubelet stops there too). The state moves through the providers: after a failure it is
  // partly updated, and the admission drops it (all or nothing, per pod).
  std::optional<Failure> Allocate(size_t i, const hints::TopologyHint& hint) {
    const std::string& name = order_[i].spec->name;
    affinity_[name] = hint;
    const ContainerContext context = ContextFor(i);
    for (const Provider* provider : Providers()) {
      const PinningCounters counters = provider->Pinning(node_, context, result_.counts);
      for (PinningCounts* c : counters) {
        if (c != nullptr) ++c->requests;
      }
      if (auto f = provider->Allocate(node_, state_, context, hint)) {
        for (PinningCounts* c : counters) {
          if (c != nullptr) ++c->errors;
        }
        return AllocationFailure(node_, name, *provider, hint, *f);
      }
    }
    if (const state::ContainerRecord held = Holdings(order_[i]); held.exclusive) {
      alongside_.Allocated(i, held.cpus);
    }
    return std::nullopt;
  }

  // What each container holds in the committed state, with its merged hint's NUMA nodes.
  void Describe() {
    for (const pod::OrderedContainer& c : order_) {
      state::ContainerRecord record = Holdings(c);
      const hints::TopologyHint& hint = affinity_[c.spec->name];
      if (hint.affinity.has_value()) record.numa_affinity = node_.numa.Ids(*hint.affinity);
      result_.containers.push_back(std::move(record));
    }
  }

  const NodePolicy& node_;
  const AdmitOptions& options_;
  const pod::Pod& pod_;
  AllocationState state_;  // the working copy; only returned on success
  std::vector<pod::OrderedContainer> order_;
  bool guaranteed_;
  RunningAlongside alongside_;
  std::map<std::string, hints::TopologyHint> affinity_;
  AdmissionResult result_;
};

absl::Status ValidatePod(const pod::Pod& pod) {
  if (pod.uid.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "pod {}/{}: metadata.uid is required for admission", pod.namespace_name, pod.name));
  }
  std::set<std::string> names;
  for (const pod::OrderedContainer& c : pod::StartOrder(pod)) {
    if (!names.insert(c.spec->name).second) {
      return absl::InvalidArgumentError(
          fmt::format("pod {}: container name \"{}\" is used twice", pod.uid, c.spec->name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AdmissionResult> Admit(const NodePolicy& node, const AllocationState& state,
                                      const pod::Pod& pod) {
  return Admit(node, state, pod, AdmitOptions());
}

absl::StatusOr<AdmissionResult> Admit(const NodePolicy& node, const AllocationState& state,
                                      const pod::Pod& pod, const AdmitOptions& options) {
  if (absl::Status valid = ValidatePod(pod); !valid.ok()) return valid;
  return Admission(node, state, pod, options).Run(state);
}

absl::StatusOr<AdmissionResult> Explain(const NodePolicy& node, const AllocationState& state,
                                        const pod::Pod& pod) {
  return Explain(node, state, pod, AdmitOptions());
}

absl::StatusOr<AdmissionResult> Explain(const NodePolicy& node, const AllocationState& state,
                                        const pod::Pod& pod, const AdmitOptions& options) {
  absl::StatusOr<AdmissionResult> result = Admit(node, state, pod, options);
  if (result.ok()) result->new_state = AllocationState{};
  return result;
}

AllocationState Release(const NodePolicy& node, const AllocationState& state,
                        std::string_view pod_uid, std::optional<std::string_view> container) {
  AllocationState out = state;
  const std::string uid(pod_uid);
  const std::optional<std::string> name =
      container ? std::optional<std::string>(*container) : std::nullopt;
  for (const Provider* provider : Providers()) provider->Release(node, out, uid, name);
  return out;
}

AllocationState InitContainersFinished(const NodePolicy& node, const AllocationState& state,
                                       const std::string& pod_uid,
                                       const std::vector<std::string>& finished) {
  AllocationState out = state;
  for (const Provider* provider : Providers()) {
    provider->InitContainersFinished(node, out, pod_uid, finished);
  }
  return out;
}

}  // namespace topologyd::admission
