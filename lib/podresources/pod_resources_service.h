// PodResourcesService: the kubelet's v1.PodResourcesLister on topologyd's allocations. Each
// call checks the caller against the PodResources allowlist (podResources.allowedPeers, or the
// top-level allowedPeers) and the kubelet's rate limit, reads one snapshot of the engine's
// allocations, and answers from it (pod_resources.h does the mapping); it changes nothing and
// never waits for a checkpoint.
//
// Thread-safety: handlers run on gRPC's threads; the rate limiter has its own mutex.
#pragma once

#include <sys/types.h>

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "lib/engine/engine.h"
#include "lib/os/clock.h"
#include "lib/podresources/rate_limit.h"
#include "lib/rpc/peer_credentials.h"

#include "podresources/v1/api.grpc.pb.h"

namespace topologyd::podresources {

class PodResourcesService final : public ::v1::PodResourcesLister::CallbackService {
 public:
  // `peers`: the registry of the PodResources socket's connections.
  PodResourcesService(engine::Engine* engine, const rpc::PeerRegistry* peers, uid_t daemon_uid,
                      const os::Clock* clock = &os::DefaultClock());

  // The generated synchronous overloads stay (unused: gRPC calls the callback ones).
  using ::v1::PodResourcesLister::CallbackService::Get;
  using ::v1::PodResourcesLister::CallbackService::GetAllocatableResources;
  using ::v1::PodResourcesLister::CallbackService::List;

  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* context,
                                 const ::v1::ListPodResourcesRequest* request,
                                 ::v1::ListPodResourcesResponse* response) override;
  grpc::ServerUnaryReactor* GetAllocatableResources(
      grpc::CallbackServerContext* context, const ::v1::AllocatableResourcesRequest* request,
      ::v1::AllocatableResourcesResponse* response) override;
  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const ::v1::GetPodResourcesRequest* request,
                                ::v1::GetPodResourcesResponse* response) override;

 private:
  // PERMISSION_DENIED for a caller outside the allowlist, RESOURCE_EXHAUSTED for a connection
  // over its uid's cap or a call over the rate limit; OK otherwise.
  grpc::Status Check(const grpc::ServerContextBase& context) ABSL_LOCKS_EXCLUDED(limit_mu_);
  // Finishes at once with `reply()` once Check passes.
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                   const std::function<grpc::Status()>& reply);

  engine::Engine* engine_;
  const rpc::PeerRegistry* peers_;
  uid_t daemon_uid_;
  const os::Clock* clock_;
  absl::Mutex limit_mu_;
  TokenBucket limit_ ABSL_GUARDED_BY(limit_mu_);
};

}  // namespace topologyd::podresources
