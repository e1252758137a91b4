// What a SIGHUP reload may change. Some keys apply to a running daemon at once (logging,
// reconcile period, peers, per-pod override permission, new device pools); the rest shape
// allocations already handed out and need a restart (docs/configuration.md marks each key).
#pragma once

#include <string>
#include <vector>

#include "lib/config/config.h"

namespace topologyd::config {

struct ReloadPlan {
  Config effective;                  // `old` with every live change from `next` applied
  std::vector<std::string> applied;  // keys changed live
  std::vector<std::string> refused;  // restart-only keys that differ; kept at old values
};

// Compares two configs key by key. Device pools may be added live; changing or removing an
// existing pool is restart-only because devices of that pool may be allocated.
ReloadPlan PlanReload(const Config& old, const Config& next);

}  // namespace topologyd::config
