// Topology hints of the device provider: kubelet's Device Manager GetTopologyHints /
// GetPodTopologyHints (spec kubelet-memory-device-checkpoint.md §b.2, topology-manager §2.4),
// computed without enumerating the 2^N NUMA masks kubelet walks.
//
// kubelet's list for a resource is every mask M (over all NUMA nodes) on which enough devices
// are usable — a device counts when any of its NUMA nodes is in M, reusable devices (held by the
// pod's finished init containers) count and must each touch M — with Preferred iff |M| equals
// the smallest mask size whose *total* device count (free or not) covers the request. That set
// is upward closed, so we return hints::ResourceHints in the upward-closed form: the minimal
// feasible masks, in kubelet's enumeration order (size, then lexicographic), each marked
// preferred iff its size is that minimal capacity-covering size (see topology_hint.h; a
// feasible mask of that size is always minimal, and wider masks are never preferred).
//
// Per resource the answer is:
//   - std::nullopt (no preference) when no device of the pool reports a NUMA node;
//   - the explicit empty list (cannot be satisfied) when fewer devices are free (+ reusable)
//     than requested, or when the container/pod already holds a different number of devices;
//   - otherwise the upward-closed list. When devices are already held (daemon restart), the
//     list is rebuilt from exactly those devices, as kubelet does.
// Only resources with a configured pool appear in the map; a container asking for no such
// resource gets an empty map (kubelet's "no preference at all"). Device hints are produced for
// every QoS class.
//
// Cost: minimal masks contain only NUMA nodes that hold candidate devices and have at most
// request + |reusable devices| nodes, so the search is over those combinations only. A
// pathological pool (very many device nodes and a large request) could still explode; past
// kMaxMasksVisited combinations the functions return FAILED_PRECONDITION rather than stall.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lib/device/device_pool.h"
#include "lib/device/device_state.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"

#include "absl/status/statusor.h"

namespace topologyd::device {

inline constexpr int64_t kMaxMasksVisited = int64_t{1} << 22;

// kubelet's generateDeviceTopologyHints for one pool: `available` and `reusable` are device ids
// of `pool` (unknown ids are ignored), `request` the device count, `numa_count` the number of
// NUMA positions of the machine (the universe of the masks).
absl::StatusOr<hints::ResourceHints> GenerateDeviceHints(const DevicePool& pool, int numa_count,
                                                         const std::vector<std::string>& available,
                                                         const std::vector<std::string>& reusable,
                                                         int64_t request);

// Devices of `resource` that `container` of `pod` may take over: those held by the pod's
// regular init containers that start before it, less those held by any container that can
// run at the same time as it (pod::RunsAlongsideLater). On a first admission that is what
// kubelet's devicesToReuse contains; when a pod is admitted again, containers it keeps (later
// init containers included) may hold devices that must not be handed out twice.
std::set<std::string> ReusableDevices(const DeviceState& state, const pod::Pod& pod,
                                      const pod::Container& container, std::string_view resource);

// Container scope. NOT_FOUND when `container_name` is not in `pod`.
absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const DeviceInventory& inventory,
                                                               const DeviceState& state,
                                                               const pod::Pod& pod,
                                                               std::string_view container_name);
// The same for a container of `pod` already looked up (an admission walks every container:
// looking each up by name would cost the pod's size each time).
absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const DeviceInventory& inventory,
                                                               const DeviceState& state,
                                                               const pod::Pod& pod,
                                                               const pod::Container& container);

// Pod scope: the request per resource is the pod's effective limit (pod.h EffectivePodLimits);
// devices already held by any container of the pod are what hints are rebuilt from; reusable
// devices play no part (kubelet passes none).
absl::StatusOr<hints::ProviderHints> GetPodTopologyHints(const DeviceInventory& inventory,
                                                         const DeviceState& state,
                                                         const pod::Pod& pod);

}  // namespace topologyd::device
