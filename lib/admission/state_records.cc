#include "lib/admission/state_records.h"

#include "lib/admission/provider.h"

namespace topologyd::admission {

state::PodRecord ToPodRecord([[maybe_unused]] const NodePolicy& node, const pod::Pod& pod,
                             const AdmissionResult& result) {
  return state::PodRecord{.uid = pod.uid,
                          .namespace_name = pod.namespace_name,
                          .name = pod.name,
                          .qos = std::string(pod::QosClassName(pod::ComputeQos(pod))),
                          .containers = result.containers};
}

absl::StatusOr<AllocationState> RestoreAllocationState(const NodePolicy& node,
                                                       const state::State& records) {
  AllocationState out = node.empty_state;
  for (const Provider* provider : ProvidersInStartOrder()) {
    if (absl::Status s = provider->Restore(node, records, out); !s.ok()) return s;
  }
  return out;
}

}  // namespace topologyd::admission
