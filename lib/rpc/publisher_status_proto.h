// The status of the daemon's publishers as the Status RPC shows them: the Placement sync
// (placement_syncer.h) as `placement`, the NodeResourceTopology publisher (nrt_api_publisher.h)
// as `nrt_api_server`.
#pragma once

#include "lib/nrt_api/nrt_api_publisher.h"
#include "lib/placement/placement_syncer.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

void PlacementSyncStatusToProto(const placement::PlacementSyncStatus& status,
                                topologyd::v1::PlacementSyncStatus* out);

void NrtApiPublishStatusToProto(const nrt_api::NrtApiPublishStatus& status,
                                topologyd::v1::NrtPublishStatus* out);

}  // namespace topologyd::rpc
