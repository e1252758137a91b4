// Topology hints of the device provider: kubelet's Device Manager GetTopologyHints /
// GetPodTopologyHints, computed without enumerating the 2^N NUMA masks kubelet walks. The rule
// and why its answer can be given as minimal masks: docs/admission.md, "Devices: Hints".
//
// Per pooled resource: std::nullopt (no preference) when no device of the pool has a NUMA
// node; the empty list (cannot be satisfied) when too few devices are free (+ reusable) or a
// different number is already held; otherwise the upward-closed list of minimal masks, in
// kubelet's order. Resources without a pool are not in the map. Every QoS class gets hints.
// FAILED_PRECONDITION past kMaxMasksVisited combinations (a pathological pool).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/device/device_pool.h"
#include "lib/device/device_state.h"
#include "lib/hints/topology_hint.h"
#include "lib/pod/pod.h"

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
