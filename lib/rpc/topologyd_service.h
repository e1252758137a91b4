// TopologydService: the gRPC face of the Engine. It checks the caller against the peer
// allowlist, translates proto <-> domain values, calls the Engine and maps outcomes to
// gRPC status codes; it makes no decisions of its own.
//
// Thread-safety: handlers run on gRPC's threads, completions of callback calls on the
// Engine's checkpoint writer; all shared state lives in the Engine.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "lib/engine/engine.h"
#include "lib/nrt_api/nrt_api_publisher.h"
#include "lib/placement/placement_syncer.h"
#include "lib/rpc/allocations_watch.h"
#include "lib/rpc/parsing_handler.h"
#include "lib/rpc/peer_credentials.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::rpc {

// Every RPC uses gRPC's callback API. A change (Admit, Allocate, Release) is decided in the
// handler, which hands its reply to the Engine's group commit and returns: the reply is sent
// from the checkpoint writer once the checkpoint holding it is durable, so no thread sits
// blocked per call while the checkpoint is written; an Admit that asks to be answered when
// decided is answered at once, and AwaitDurable then waits like a change. Reads answer at
// once. WatchAllocations streams from the Engine's checkpoint writer (AllocationsWatch).
using TopologydCallbackService = topologyd::v1::Topologyd::CallbackService;

class TopologydService final : public TopologydCallbackService {
 public:
  // `peers` may be null for in-process use (no fd peers): then every call is allowed.
  TopologydService(engine::Engine* engine, const PeerRegistry* peers, uid_t daemon_uid);

  // The generated synchronous overloads stay (unused: gRPC calls the callback ones).
  using TopologydCallbackService::Admit;
  using TopologydCallbackService::Allocate;
  using TopologydCallbackService::AwaitDurable;
  using TopologydCallbackService::Explain;
  using TopologydCallbackService::GetNodeResourceTopology;
  using TopologydCallbackService::GetTopology;
  using TopologydCallbackService::ListAllocations;
  using TopologydCallbackService::PlanContainer;
  using TopologydCallbackService::Release;
  using TopologydCallbackService::Status;
  using TopologydCallbackService::WatchAllocations;

  grpc::ServerUnaryReactor* Admit(grpc::CallbackServerContext* context,
                                  const topologyd::v1::AdmitRequest* request,
                                  topologyd::v1::AdmitResponse* response) override;
  grpc::ServerUnaryReactor* AwaitDurable(grpc::CallbackServerContext* context,
                                         const topologyd::v1::AwaitDurableRequest* request,
                                         topologyd::v1::AwaitDurableResponse* response) override;
  // Admit for a container the runtime is about to create, from the pod as the runtime shows
  // it (lib/planner); answered like Admit, or at once when there is nothing to admit.
  grpc::ServerUnaryReactor* PlanContainer(grpc::CallbackServerContext* context,
                                          const topologyd::v1::PlanContainerRequest* request,
                                          topologyd::v1::PlanContainerResponse* response) override;
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* context,
                                     const topologyd::v1::AllocateRequest* request,
                                     topologyd::v1::AllocateResponse* response) override;
  grpc::ServerUnaryReactor* Release(grpc::CallbackServerContext* context,
                                    const topologyd::v1::ReleaseRequest* request,
                                    topologyd::v1::ReleaseResponse* response) override;
  grpc::ServerUnaryReactor* Explain(grpc::CallbackServerContext* context,
                                    const topologyd::v1::ExplainRequest* request,
                                    topologyd::v1::ExplainResponse* response) override;
  grpc::ServerUnaryReactor* ListAllocations(
      grpc::CallbackServerContext* context, const topologyd::v1::ListAllocationsRequest* request,
      topologyd::v1::ListAllocationsResponse* response) override;
  grpc::ServerUnaryReactor* GetTopology(grpc::CallbackServerContext* context,
                                        const topologyd::v1::GetTopologyRequest* request,
                                        topologyd::v1::GetTopologyResponse* response) override;
  grpc::ServerUnaryReactor* GetNodeResourceTopology(
      grpc::CallbackServerContext* context,
      const topologyd::v1::GetNodeResourceTopologyRequest* request,
      topologyd::v1::GetNodeResourceTopologyResponse* response) override;
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* context,
                                   const topologyd::v1::StatusRequest* request,
                                   topologyd::v1::StatusResponse* response) override;

  grpc::ServerWriteReactor<topologyd::v1::ListAllocationsResponse>* WatchAllocations(
      grpc::CallbackServerContext* context,
      const topologyd::v1::WatchAllocationsRequest* request) override;

  // Ends every WatchAllocations stream with UNAVAILABLE and `why`, and every one started
  // later at once: the daemon is stopping. Streams count in InFlight() until they have ended.
  void EndWatches(const std::string& why) ABSL_LOCKS_EXCLUDED(watches_mu_);

  // Calls started and not finished yet; the daemon waits for this to reach 0 when stopping.
  int InFlight() const { return in_flight_->load(); }

  // Where Status() reads the Placement sync's state (daemon with `placement` only) and the
  // NodeResourceTopology publisher's (with `nrt.apiServer` only); set before the server starts.
  void SetPlacementStatusSource(std::function<placement::PlacementSyncStatus()> source) {
    placement_status_ = std::move(source);
  }
  void SetNrtApiStatusSource(std::function<nrt_api::NrtApiPublishStatus()> source) {
    nrt_api_status_ = std::move(source);
  }

 private:
  // PERMISSION_DENIED unless the caller's credentials pass the configured allowlist.
  grpc::Status CheckPeer(const grpc::ServerContextBase& context) const;
  // Makes `method` parse its requests here (parsing_handler.h): one whose bytes do not parse
  // gets INVALID_ARGUMENT naming the method, once the caller passes CheckPeer.
  template <class Request, class Response>
  void ParseRequestsOf(std::string_view method,
                       grpc::ServerUnaryReactor* (TopologydService::*handler)(
                           grpc::CallbackServerContext*, const Request*, Response*));
  // Starts counting a call for InFlight(); Finish() ends it with `status`.
  grpc::ServerUnaryReactor* BeginCall(grpc::CallbackServerContext* context);
  void Finish(grpc::ServerUnaryReactor* reactor, const grpc::Status& status);
  // Finish for a call answered without waiting for the Engine's writer; returns `reactor`.
  grpc::ServerUnaryReactor* FinishNow(grpc::ServerUnaryReactor* reactor,
                                      const grpc::Status& status);

  // A read: checks the caller, then finishes at once with `reply()`, which fills the response.
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                   const std::function<grpc::Status()>& reply);
  // A change: checks the caller, then the request (`check`); if both pass, `start` hands the
  // change to the Engine, whose completion fills the response (`reply`) once it is durable.
  template <class T>
  grpc::ServerUnaryReactor* AnswerWhenDurable(
      grpc::CallbackServerContext* context, const std::function<grpc::Status()>& check,
      const std::function<void(engine::Completion<T>)>& start, std::function<void(const T&)> reply);
  grpc::Status StatusReply(topologyd::v1::StatusResponse* response) const;

  engine::Engine* engine_;
  const PeerRegistry* peers_;
  std::function<placement::PlacementSyncStatus()> placement_status_;  // empty: not syncing
  std::function<nrt_api::NrtApiPublishStatus()> nrt_api_status_;      // empty: not publishing
  // Shared with each finishing call: a call counts until its reply is handed to gRPC, and
  // the last reply can let the server (and this object) go while its Finish still returns.
  const std::shared_ptr<std::atomic<int>> in_flight_ = std::make_shared<std::atomic<int>>(0);
  uid_t daemon_uid_;

  absl::Mutex watches_mu_;
  // Set by EndWatches: why new streams end at once.
  std::optional<std::string> stopping_ ABSL_GUARDED_BY(watches_mu_);
  std::map<uint64_t, std::weak_ptr<AllocationsWatch>> watches_ ABSL_GUARDED_BY(watches_mu_);
  uint64_t next_watch_ ABSL_GUARDED_BY(watches_mu_) = 1;
};

}  // namespace topologyd::rpc
