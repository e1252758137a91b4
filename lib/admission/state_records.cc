#include "lib/admission/state_records.h"

#include "lib/admission/provider.h"

namespace topologyd::admission {

absl::StatusOr<AllocationState> RestoreAllocationState(const NodePolicy& node,
                                                       const state::State& records) {
  AllocationState out = node.empty_state;
  for (const Provider* provider : ProvidersInStartOrder()) {
    if (absl::Status s = provider->Restore(node, records, out); !s.ok()) return s;
  }
  return out;
}

}  // namespace topologyd::admission
