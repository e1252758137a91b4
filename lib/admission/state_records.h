// Between admission's AllocationState (the providers' working states) and lib/state's
// persisted State (what each pod's containers hold, by whom).
//
// ToPodRecord(): the record of a freshly admitted pod, for the engine to put into its State
// before the checkpoint.
//
// RestoreAllocationState(): at start-up, the providers' states rebuilt from the persisted
// records and the current configuration and machine. Free pools are recomputed from the
// records, never read from storage. Anything the records hold that the node can no longer give
// is a conflict, reported as FAILED_PRECONDITION naming pod, container and resource and saying
// what the operator can do, e.g.
//   pod default/web (uid 1234) container "app": exclusive CPUs 2-3 are now reserved
//   (reservedSystemCPUs / cpuReservedCount); give the reservation other CPUs, or drain the
//   node and remove the state file
//
// Memory records: `memory` maps NUMA node -> resource -> bytes. A container has at most one
// block per resource; the block's NUMA nodes are the nodes listed for that resource — a node of
// a multi-node block is listed even when it holds 0 bytes of it — and its size is the sum. The
// per-node split is indicative (filled lowest node first up to each node's allocatable, as the
// kernel tends to); restoring uses only the node set and the sum, as kubelet's own checkpoint
// does.
//
// Not restored (kubelet forgets them on restart too): which finished init container's CPUs or
// memory an app container may still take over.
//
// Pure functions.
#pragma once

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/pod/pod.h"
#include "lib/state/state.h"

#include "absl/status/statusor.h"

namespace topologyd::admission {

// The record of `pod` after a successful Admit() (`result.admitted`); container_id and cgroup
// stay empty (the engine fills them on Allocate). Containers in admission order.
state::PodRecord ToPodRecord(const NodePolicy& node, const pod::Pod& pod,
                             const AdmissionResult& result);

// The providers' states for `records` on this node. FAILED_PRECONDITION on a conflict (see
// above): exclusive CPUs that no longer exist, are reserved, or are held by two pods; exclusive
// CPUs or memory blocks under a policy that has none (cpuManagerPolicy none / memoryManagerPolicy
// None); memory on a NUMA node or of a hugepage size the machine lacks, or more than a node can
// hold; a multi-node memory block that overlaps a different group; a device resource without a
// pool, a device no longer in its pool, or a device held by two pods.
[[nodiscard]] absl::StatusOr<AllocationState> RestoreAllocationState(const NodePolicy& node,
                                                                     const state::State& records);

}  // namespace topologyd::admission
