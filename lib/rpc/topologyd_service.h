// TopologydService: the gRPC face of the Engine. It checks the caller against the peer
// allowlist, translates proto <-> domain values, calls the Engine and maps outcomes to
// gRPC status codes; it makes no decisions of its own.
//
// Thread-safety: handlers run on gRPC's thread pool; all shared state lives in the Engine.
#pragma once

#include <memory>
#include <string>

#include "lib/engine/engine.h"
#include "lib/rpc/peer_credentials.h"

#include "topologyd/v1/topologyd.grpc.pb.h"
#include <sys/types.h>

namespace topologyd::rpc {

class TopologydService final : public topologyd::v1::Topologyd::Service {
 public:
  // `peers` may be null for in-process use (no fd peers): then every call is allowed.
  TopologydService(engine::Engine* engine, const PeerRegistry* peers, uid_t daemon_uid);

  grpc::Status Status(grpc::ServerContext* context, const topologyd::v1::StatusRequest* request,
                      topologyd::v1::StatusResponse* response) override;
  grpc::Status GetTopology(grpc::ServerContext* context,
                           const topologyd::v1::GetTopologyRequest* request,
                           topologyd::v1::GetTopologyResponse* response) override;

 private:
  // PERMISSION_DENIED unless the caller's credentials pass the configured allowlist.
  grpc::Status CheckPeer(const grpc::ServerContext& context) const;

  engine::Engine* engine_;
  const PeerRegistry* peers_;
  uid_t daemon_uid_;
};

}  // namespace topologyd::rpc
