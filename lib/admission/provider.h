// The shape every resource provider has, as kubelet's topology manager sees its HintProviders:
// hints for a container, hints for a whole pod, allocation of a container inside a merged
// hint, and release; and, as kubelet's managers do with their checkpoints, what a container
// holds (Describe) and the state rebuilt from the records at start-up (Restore). Each is a
// function of the node policy and the allocation state; a provider whose policy is off
// answers "no preference" and allocates nothing.
//
// A provider owns its part of AllocationState end to end. Admission asks Providers() in
// kubelet's registration order (devices, CPUs, memory) and never looks inside a provider's
// state: what a container holds comes from the providers' Describe, and no provider is told
// apart from another but by what it answers. (A pod split over NUMA nodes, numa_split.h, is
// no provider's business: that allocator of its own takes CPUs, memory and devices its way.)
//
// Thread-safety: providers are stateless; share them freely.
#pragma once

#include <array>
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
#include "lib/state/state.h"

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
  // What was asked and what was free, in the user's terms; put before kubelet's text, whose
  // counts are what is left inside the placement ("asks 64 CPUs, 23 are free ...").
  std::string summary;
};

// What kubelet's managers would count for one admission in their metrics (docs/operations.md,
// "Metrics"): Allocate calls that pin, and those that failed.
struct PinningCounts {
  int requests = 0;
  int errors = 0;
};
struct ManagerCounts {
  PinningCounts cpu;     // the CPU manager: containers given exclusive CPUs
  PinningCounts memory;  // the Memory manager: containers of a Guaranteed pod (Static)
  // Of the CPU pinning requests, those under full-pcpus-only (kubelet's physical_cpu
  // alignment counters).
  PinningCounts cpu_full_pcpus;
};
// The counters one Allocate is counted in; nullptr for none.
using PinningCounters = std::array<PinningCounts*, 2>;

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
  // Where kubelet's manager counts this container's Allocate as a pinning request
  // (cpu_manager_pinning_requests_total, memory_manager_pinning_requests_total; a failed one
  // also as an error): the counters of `counts` it adds to, none when it pins nothing. The CPU
  // manager pins exclusive CPUs under the static policy (under full-pcpus-only also counted as
  // physical-CPU alignments), the Memory manager a Guaranteed pod's containers under the
  // Static policy; the device manager pins nothing.
  virtual PinningCounters Pinning(const NodePolicy& node, const ContainerContext& c,
                                  ManagerCounts& counts) const = 0;
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

  // Writes the provider's part of what container `record.name` of pod `pod_uid` holds in
  // `state` into `record`: CPUs (exclusive, or the shared pool), memory per NUMA node, devices.
  virtual void Describe(const NodePolicy& node, const AllocationState& state,
                        const std::string& pod_uid, state::ContainerRecord& record) const = 0;
  // kubelet's manager reading its checkpoint at start-up: rebuilds the provider's part of
  // `state` (the node's empty state on entry) from what `records` say the containers hold,
  // free pools recomputed. FAILED_PRECONDITION naming pod, container and resource, and what
  // the operator can do, for what this node can no longer give (state_records.h).
  virtual absl::Status Restore(const NodePolicy& node, const state::State& records,
                               AllocationState& state) const = 0;
};

// The providers in kubelet's registration order: the order of hints, allocation and release.
const std::vector<const Provider*>& Providers();
// The same providers in the order kubelet's container manager starts their managers (CPU,
// memory, devices): the order of Restore, so that records with several conflicts name the one
// kubelet would meet first.
const std::vector<const Provider*>& ProvidersInStartOrder();

}  // namespace topologyd::admission
