// The `socket` and `allowedPeers` mappings, read alike for every Unix socket the daemon serves
// (the topologyd API's at the top level, the PodResources API's under `podResources`).
#pragma once

#include "lib/config/config.h"
#include "lib/config/yaml_map_reader.h"

namespace topologyd::config {

// A `socket` mapping (mode, group, maxConnectionsPerUid) into `out`.
void ReadSocketConfig(MapReader& s, SocketConfig* out);

// An `allowedPeers` mapping (uids, gids, sameUser) into `out`.
void ReadAllowedPeers(MapReader& p, AllowedPeers* out);

}  // namespace topologyd::config
