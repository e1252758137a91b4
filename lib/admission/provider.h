// The shape every resource provider has, as kubelet's topology manager sees its HintProviders:
// hints for a container, hints for a whole pod, allocation of a container inside a merged
// hint, and release. Each is a function of the node policy and the allocation state; a
// provider whose policy is off answers "no preference" and allocates nothing.
//
// Admission asks Providers() in kubelet's registration order (devices, CPUs, memory) and never
// looks inside a provider's state.
//
// Thread-safety: providers are stateless; share them freely.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/admission/node_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"

namespace topologyd::admission {

// One container of a pod being admitted, with what the providers need to know of it.
struct ContainerContext {
  const pod::Pod& pod;
  const pod::OrderedContainer& container;
  bool guaranteed;  // the pod's QoS class is Guaranteed
  // CPUs of the pod's containers that can run at the same time as this one (RunningAlongside).
  CpuSet held_alongside;
};

// A pod being admitted under pod scope.
struct PodContext {
  const pod::Pod& pod;
  const std::vector<pod::OrderedContainer>& order;  // start order
  bool guaranteed;
};

// Why a provider could not allocate, as kubelet's admission reports it.
struct ProviderFailure {
  std::string reason;              // kubelet's admission reason
  std::string message;             // the provider's own words (admission adds where it happened)
  bool message_is_reason = false;  // kubelet shows the text as is (the CPU manager's SMT error)
};

class Provider {
 public:
  virtual ~Provider() = default;
  // The provider's name in explanations ("devices", "cpu", "memory").
  virtual std::string_view name() const = 0;
  // Its manager's name in messages ("device", "cpu", "memory").
  virtual std::string_view manager() const = 0;

  // An error is the provider failing to compute hints (not "cannot be satisfied", which is an
  // empty hint list).
  virtual absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                              const AllocationState& state,
                                                              const ContainerContext& c) const = 0;
  virtual absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                        const AllocationState& state,
                                                        const PodContext& pod) const = 0;
  // Whether kubelet's manager counts this container's Allocate as a pinning request
  // (cpu_manager_pinning_requests_total, memory_manager_pinning_requests_total): the CPU
  // manager for exclusive CPUs under the static policy, the Memory manager for a Guaranteed
  // pod under the Static policy. The device manager pins nothing.
  virtual bool Pins(const NodePolicy& node, const ContainerContext& c) const = 0;
  // Allocates inside `hint`, updating `state` (left partly updated after a failure: admission
  // drops it).
  virtual std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                                  const ContainerContext& c,
                                                  const hints::TopologyHint& hint) const = 0;
  // Returns what one container (or, without `container`, every container) of the pod holds.
  virtual void Release(const NodePolicy& node, AllocationState& state, const std::string& pod_uid,
                       const std::optional<std::string>& container) const = 0;
  // kubelet's AddContainer when a container starts: `finished` are the pod's regular init
  // containers before it, which have run to completion. kubelet's memory manager frees their
  // memory then; its CPU and device managers keep what they hold until the pod goes.
  virtual void InitContainersFinished(const NodePolicy& /*node*/, AllocationState& /*state*/,
                                      const std::string& /*pod_uid*/,
                                      const std::vector<std::string>& /*finished*/) const {}
};

// The providers in kubelet's registration order.
const std::vector<const Provider*>& Providers();

}  // namespace topologyd::admission
