#include "lib/rpc/nrt_reply.h"

#include "lib/nrt/node_name.h"
#include "lib/nrt/node_resource_topology.h"
#include "lib/nrt/nrt_json.h"
#include "lib/pod/names.h"

namespace topologyd::rpc {

grpc::Status NodeResourceTopologyReply(const engine::Engine& engine,
                                       const v1::GetNodeResourceTopologyRequest& request,
                                       v1::GetNodeResourceTopologyResponse* response) {
  if (!request.node_name().empty() && !pod::IsDnsSubdomain(request.node_name())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "node_name: not a Kubernetes node name (lower-case letters, digits, '-' "
                        "and '.', starting and ending with a letter or digit; at most 253)");
  }
  // Durable only, like the NRT file: a scheduler must not see what was not acknowledged.
  engine::DurableAllocations durable = engine.DurableAllocationsNow();
  const std::string name = request.node_name().empty()
                               ? nrt::NodeName(engine.config()->nrt.node_name)
                               : request.node_name();
  nrt::NodeResourceTopology object =
      nrt::BuildNodeResourceTopology(*engine.policy(), durable->state, name);
  response->set_object_json(nrt::ToJson(object).dump());
  response->set_generation(durable->state.generation);
  return grpc::Status::OK;
}

}  // namespace topologyd::rpc
