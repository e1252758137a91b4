// GetNodeResourceTopology's answer: the NodeResourceTopology object built, as the daemon's NRT
// file is, from the node policy and the newest durable state.
#pragma once

#include <grpcpp/support/status.h>

#include "lib/engine/engine.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

grpc::Status NodeResourceTopologyReply(const engine::Engine& engine,
                                       const v1::GetNodeResourceTopologyRequest& request,
                                       v1::GetNodeResourceTopologyResponse* response);

}  // namespace topologyd::rpc
