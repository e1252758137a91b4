#include "lib/device/device_state.h"

namespace topologyd::device {

std::set<std::string> DevicesInUse(const DeviceState& state, std::string_view resource) {
  std::set<std::string> ids;
  for (const auto& [uid, containers] : state.pods) {
    for (const auto& [name, resources] : containers) {
      auto it = resources.find(resource);
      if (it != resources.end()) ids.insert(it->second.begin(), it->second.end());
    }
  }
  return ids;
}

std::vector<std::string> ContainerDeviceIds(const DeviceState& state, std::string_view pod_uid,
                                            std::string_view container, std::string_view resource) {
  auto pod = state.pods.find(pod_uid);
  if (pod == state.pods.end()) return {};
  auto c = pod->second.find(container);
  if (c == pod->second.end()) return {};
  auto r = c->second.find(resource);
  if (r == c->second.end()) return {};
  return r->second;
}

std::set<std::string> PodDeviceIds(const DeviceState& state, std::string_view pod_uid,
                                   std::string_view resource) {
  std::set<std::string> ids;
  auto pod = state.pods.find(pod_uid);
  if (pod == state.pods.end()) return ids;
  for (const auto& [name, resources] : pod->second) {
    auto it = resources.find(resource);
    if (it != resources.end()) ids.insert(it->second.begin(), it->second.end());
  }
  return ids;
}

DeviceState ReleaseContainer(DeviceState state, std::string_view pod_uid,
                             std::string_view container) {
  auto pod = state.pods.find(pod_uid);
  if (pod == state.pods.end()) return state;
  auto c = pod->second.find(container);
  if (c != pod->second.end()) pod->second.erase(c);
  if (pod->second.empty()) state.pods.erase(pod);
  return state;
}

DeviceState ReleasePod(DeviceState state, std::string_view pod_uid) {
  auto pod = state.pods.find(pod_uid);
  if (pod != state.pods.end()) state.pods.erase(pod);
  return state;
}

}  // namespace topologyd::device
