// From lib/state's persisted State (what each pod's containers hold, by whom) back to
// admission's AllocationState (the providers' working states): RestoreAllocationState()
// rebuilds the providers' states at start-up from the records and the current configuration
// and machine (free pools recomputed, never read), each provider its own (Provider::Restore),
// in the order kubelet starts their managers. (The ledger records admitted pods: ToPodRecord.)
// The memory record's layout and what is not restored: docs/admission.md, "Persisted state".
//
// Anything the records hold that the node can no longer give is FAILED_PRECONDITION naming
// pod, container and resource, and what the operator can do. Pure functions.
#pragma once

#include "absl/status/statusor.h"

#include "lib/admission/node_policy.h"
#include "lib/state/state.h"

namespace topologyd::admission {

// The providers' states for `records` on this node. FAILED_PRECONDITION on a conflict (see
// above): exclusive CPUs that no longer exist, are reserved, or are held by two pods; exclusive
// CPUs or memory blocks under a policy that has none (cpuManagerPolicy none / memoryManagerPolicy
// None); memory on a NUMA node or of a hugepage size the machine lacks, or more than a node can
// hold; a multi-node memory block that overlaps a different group; a device resource without a
// pool, a device no longer in its pool, or a device held by two pods.
[[nodiscard]] absl::StatusOr<AllocationState> RestoreAllocationState(const NodePolicy& node,
                                                                     const state::State& records);

}  // namespace topologyd::admission
