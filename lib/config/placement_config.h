// The `placement` block: reading and checking it, and what a reload may change in it (every
// key: the syncer reads the configuration afresh before each sync).
#pragma once

#include <functional>
#include <string>

#include "lib/config/config.h"
#include "lib/config/config_diff.h"
#include "lib/config/yaml_map_reader.h"

namespace topologyd::config {

// The longest node name: Placement takes names of up to 200 characters, and the longest
// derived name adds "_NUMA<id>_PAGE_<size>KB" or a PCI bus id to it.
inline constexpr size_t kMaxPlacementNodeName = 160;
// Below this a sync would run back to back against a service shared by a whole cloud.
inline constexpr std::chrono::seconds kMinPlacementSyncPeriod{1};

// Reads the mapping under `placement`. `resolve` makes a path as the daemon will use it
// (relative to the config file). Problems name the key (placement.endpoint, ...).
void ReadPlacement(MapReader& r, const std::function<std::string(const std::string&)>& resolve,
                   PlacementConfig* out);

// Adds placement's keys to `plan`: turning the block on or off needs a restart (the syncer's
// thread starts with the daemon); every key inside it is live.
void PlanPlacementReload(const Config& old, const Config& next, ReloadPlan* plan);

}  // namespace topologyd::config
