// DeviceState: which devices each container holds, per resource — the part of kubelet's
// device checkpoint (PodDeviceEntries) that topologyd needs so that devices stay allocated
// across daemon restarts. A plain value of nested ordered maps, so the state layer can persist
// it and tests can compare it.
//
// A device is "in use" while any container of any pod holds it; an app container may hold the
// same device as a finished (non-restartable) init container of its pod (kubelet's device
// reuse), so the same id can appear under two containers of one pod.
//
// Thread-safety: a plain value.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace topologyd::device {

// resource name -> device ids (ascending)
using ResourceDevices = std::map<std::string, std::vector<std::string>, std::less<>>;
// container name -> resources
using ContainerDevices = std::map<std::string, ResourceDevices, std::less<>>;

struct DeviceState {
  std::map<std::string, ContainerDevices, std::less<>> pods;  // by pod uid
  friend bool operator==(const DeviceState&, const DeviceState&) = default;
};

// Ids of `resource` held by any container of any pod.
std::set<std::string> DevicesInUse(const DeviceState& state, std::string_view resource);
// Ids of `resource` held by `container` of `pod_uid` (empty if none).
std::vector<std::string> ContainerDeviceIds(const DeviceState& state, std::string_view pod_uid,
                                            std::string_view container, std::string_view resource);
// Ids of `resource` held by any container of `pod_uid`.
std::set<std::string> PodDeviceIds(const DeviceState& state, std::string_view pod_uid,
                                   std::string_view resource);

// Removes the container's entries (no-op when absent). Devices another container of the pod
// still holds stay in use.
DeviceState ReleaseContainer(DeviceState state, std::string_view pod_uid,
                             std::string_view container);
// Removes every entry of the pod (kubelet frees devices when the pod stops being active).
DeviceState ReleasePod(DeviceState state, std::string_view pod_uid);

}  // namespace topologyd::device
