// The daemon's Placement sync status (placement_syncer.h) as the Status RPC's `placement`.
#pragma once

#include "lib/placement/placement_syncer.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

void PlacementSyncStatusToProto(const placement::PlacementSyncStatus& status,
                                topologyd::v1::PlacementSyncStatus* out);

}  // namespace topologyd::rpc
