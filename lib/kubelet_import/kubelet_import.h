// Turning kubelet's resource-manager checkpoints into a topologyd State, so a node can move
// from kubelet's CPU and Memory Managers (and Device Manager bookkeeping) to topologyd without
// draining.
//
// What carries over, per container of each pod uid found in any of the checkpoints:
//  - cpu_manager_state: the exclusive CPUs (`exclusive = true`); the shared pool is not stored,
//    topologyd recomputes it;
//  - memory_manager_state: the memory blocks, as bytes per NUMA node and resource. A block that
//    spans several NUMA nodes does not say how much came from each; the split is rebuilt from
//    the per-node `reserved` figures of the file's machine state (single-node blocks first,
//    then spanning blocks fill their nodes in id order), which keeps each node's total exact.
//    `numa_affinity` is the union of the container's block affinities;
//  - kubelet_internal_checkpoint: device ids per resource (each once, in NUMA-node order).
// Kubelet keeps no namespace, pod name, init or restartable (sidecar) flag, container id or
// cgroup: those stay empty (init = false, restartable = false). `qos` is "Guaranteed" for pods with
// CPU or memory entries (kubelet's static policies serve only those), else empty.
//
// Pure function; thread-safe.
#pragma once

#include "absl/status/statusor.h"

#include "lib/kubelet_import/kubelet_checkpoints.h"
#include "lib/state/state.h"

namespace topologyd::state::kubelet {

// Builds the State (generation 0) from parsed checkpoints; `memory` and `devices` may be null.
// FAILED_PRECONDITION, naming pod and container, when the checkpoints cannot describe a valid
// topologyd state: an unknown policy; assignments under policy none/None; an unparsable CPU
// list (kubelet's wording); exclusive CPUs that overlap the shared pool or another pod's; a
// block without NUMA affinity; pod-level memory blocks (not imported).
[[nodiscard]] absl::StatusOr<State> ImportKubeletState(const CpuCheckpoint& cpu,
                                                       const MemoryCheckpoint* memory,
                                                       const DeviceCheckpoint* devices);

}  // namespace topologyd::state::kubelet
