// TopologydService: the gRPC face of the Engine. It checks the caller against the peer
// allowlist, translates proto <-> domain values, calls the Engine and maps outcomes to
// gRPC status codes; it makes no decisions of its own.
//
// Thread-safety: handlers run on gRPC's thread pool; all shared state lives in the Engine.
#pragma once

#include <atomic>
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
  grpc::Status Admit(grpc::ServerContext* context, const topologyd::v1::AdmitRequest* request,
                     topologyd::v1::AdmitResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context, const topologyd::v1::ExplainRequest* request,
                       topologyd::v1::ExplainResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context, const topologyd::v1::AllocateRequest* request,
                        topologyd::v1::AllocateResponse* response) override;
  grpc::Status Release(grpc::ServerContext* context, const topologyd::v1::ReleaseRequest* request,
                       topologyd::v1::ReleaseResponse* response) override;
  // Calls being handled right now; the daemon waits for this to reach 0 when stopping.
  int InFlight() const { return in_flight_.load(); }

  grpc::Status ListAllocations(grpc::ServerContext* context,
                               const topologyd::v1::ListAllocationsRequest* request,
                               topologyd::v1::ListAllocationsResponse* response) override;

 private:
  // PERMISSION_DENIED unless the caller's credentials pass the configured allowlist.
  grpc::Status CheckPeer(const grpc::ServerContext& context) const;

  // Counts a handler for InFlight() while it runs.
  class CallScope {
   public:
    explicit CallScope(std::atomic<int>* n) : n_(n) { n_->fetch_add(1); }
    ~CallScope() { n_->fetch_sub(1); }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

   private:
    std::atomic<int>* n_;
  };

  engine::Engine* engine_;
  const PeerRegistry* peers_;
  std::atomic<int> in_flight_{0};
  uid_t daemon_uid_;
};

}  // namespace topologyd::rpc
