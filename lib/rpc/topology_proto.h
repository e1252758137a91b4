// Conversion between the Topology model and its topologyd.v1 proto form. Lossless both
// ways, so `topoctl topology` renders the daemon's machine with the same code as offline.
#pragma once

#include "absl/status/statusor.h"

#include "lib/topology/topology.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

void TopologyToProto(const topology::Topology& in, topologyd::v1::Topology* out);
// INVALID_ARGUMENT when a CPU list in the message does not parse.
absl::StatusOr<topology::Topology> TopologyFromProto(const topologyd::v1::Topology& in);

}  // namespace topologyd::rpc
