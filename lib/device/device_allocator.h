// Device allocation for one container: kubelet's Device Manager Allocate / devicesToAllocate
// (docs/admission.md, "Devices: Allocation"), as a pure function from state to state.
//
// For every resource of the container's limits that has a pool (in resource-name order):
//   1. devices the container already holds must match the request, else
//      `pod "<uid>" container "<name>" changed request for resource "<r>" from <held> to <req>`;
//   2. a pool without devices fails with `no healthy devices present; cannot allocate unhealthy
//      devices <r>`; held devices no longer in the pool fail with `previously allocated devices
//      are no longer healthy; cannot allocate unhealthy devices <r>`;
//   3. nothing more to do when the container already holds them all;
//   4. devices reusable from the pod's finished init containers are taken first;
//   5. the rest come from the free devices (`requested number of devices unavailable for <r>.
//      Requested: <n>, Available: <m>` when too few): if the aligned devices (those with a NUMA
//      node inside `affinity`) outnumber what is still needed, only aligned ones are taken;
//      otherwise all aligned ones, then unaligned ones, then devices without topology.
// With a nil affinity or a pool without topology every device counts as "no topology".
// Inside each set kubelet's order is arbitrary (hash sets); ours is the pool order (ascending
// device id), so results are deterministic. topologyd has no GetPreferredAllocation plugin hook.
//
// Errors are returned as FAILED_PRECONDITION (code) with kubelet's text (message); the admission
// layer turns them into kubelet's UnexpectedAdmissionError rejection. On error nothing changes
// (the input state is not modified; all resources of the container or none).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

#include "lib/device/device_pool.h"
#include "lib/device/device_state.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"

namespace topologyd::device {

// `affinity` is the topology manager's merged hint for this container (masks over NUMA
// positions). NOT_FOUND when the container is not in `pod`.
absl::StatusOr<DeviceState> Allocate(const DeviceInventory& inventory, DeviceState state,
                                     const pod::Pod& pod, std::string_view container_name,
                                     const hints::TopologyHint& affinity);
// The same for a container of `pod` already looked up. The state is taken by value so that an
// admission can move it through container after container without copying it.
absl::StatusOr<DeviceState> Allocate(const DeviceInventory& inventory, DeviceState state,
                                     const pod::Pod& pod, const pod::Container& container,
                                     const hints::TopologyHint& affinity);

}  // namespace topologyd::device
