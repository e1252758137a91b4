// `-o svg` for `topology` and `allocations`: the allocation listing (the daemon's
// ListAllocations reply, or the one offline `allocations` builds) in the form the picture
// renderer draws (lib/picture/allocations_drawing.h).
#pragma once

#include "absl/status/statusor.h"

#include "lib/picture/allocations_drawing.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topoctl {

// Pods in the reply's order. INVALID_ARGUMENT naming the pod and container when a CPU list
// does not parse.
absl::StatusOr<topologyd::picture::AllocationsDrawing> DrawingOfAllocations(
    const topologyd::v1::ListAllocationsResponse& reply);

}  // namespace topoctl
