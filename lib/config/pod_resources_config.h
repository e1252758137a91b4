// The `podResources` block: reading it (with the same rules as the top-level `listen`,
// `socket` and `allowedPeers`), what a reload may change in it, and the values in force when
// its `socket` or `allowedPeers` is left out (the top-level ones).
#pragma once

#include <functional>
#include <string>

#include "lib/config/config.h"
#include "lib/config/config_diff.h"
#include "lib/config/socket_keys.h"
#include "lib/config/yaml_map_reader.h"

namespace topologyd::config {

// Reads the mapping under `podResources`. `resolve` makes a path as the daemon will use it
// (relative to the config file); `main_socket` is the top-level socket's path, resolved.
// Problems name the key (podResources.listen, podResources.socket.mode, ...).
void ReadPodResources(MapReader& r, const std::function<std::string(const std::string&)>& resolve,
                      const std::string& main_socket, PodResourcesConfig* out);

// Adds podResources' keys to `plan`: turning it on or off, its listen path and its socket's
// mode and group need a restart; its allowedPeers and maxConnectionsPerUid are live.
void PlanPodResourcesReload(const Config& old, const Config& next, ReloadPlan* plan);

// The socket settings and allowlist of the PodResources socket; `config.pod_resources` must
// be set.
const SocketConfig& PodResourcesSocket(const Config& config);
const AllowedPeers& PodResourcesPeers(const Config& config);

}  // namespace topologyd::config
