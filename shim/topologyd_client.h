// The shim's calls to topologyd over its Unix socket, each with a deadline: the configured
// timeout, or kubelet's remaining deadline when that is shorter, so a clear "topologyd did not
// answer" reaches kubelet before kubelet gives up on the call itself.
//
// Thread-safe (one channel, shared by every caller).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include <grpcpp/grpcpp.h>

#include "lib/pod/pod.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::shim {

class TopologydClient {
 public:
  using Deadline = std::chrono::system_clock::time_point;

  TopologydClient(std::string socket_path, std::chrono::milliseconds timeout);

  const std::string& socket_path() const { return socket_path_; }

  // With `answer_when_decided`, topologyd may answer before the decision is on disk
  // (AdmitResponse.not_yet_durable): then nothing may be acknowledged before AwaitDurable.
  absl::StatusOr<v1::AdmitResponse> Admit(const pod::Pod& pod, std::optional<Deadline> deadline,
                                          bool answer_when_decided = false);
  // topologyd's plan for a container about to be created (its PlanContainer). With
  // request.answer_when_decided, the admission may come before it is on disk, as with Admit.
  absl::StatusOr<v1::PlanContainerResponse> PlanContainer(const v1::PlanContainerRequest& request,
                                                          std::optional<Deadline> deadline);
  // Calls `done` once topologyd says everything up to the admission's state generation is on
  // disk, or with why not; on a gRPC thread, or on this one when the call cannot start. It
  // touches nothing of this client, so it may come after the client is gone.
  void AwaitDurableAsync(const v1::AdmitResponse& admitted, std::optional<Deadline> deadline,
                         std::function<void(absl::Status)> done);
  absl::StatusOr<v1::AllocateResponse> Allocate(const std::string& pod_uid,
                                                const std::string& container,
                                                const std::string& container_id,
                                                const std::string& cgroup);
  // Releases the pod, or one container of it only while it is bound to `container_id` (when
  // not empty).
  absl::Status Release(const std::string& pod_uid, const std::string& container,
                       const std::string& container_id);
  absl::StatusOr<v1::ListAllocationsResponse> ListAllocations();

  // The server-streaming watch; the caller owns the context (to cancel it).
  std::unique_ptr<grpc::ClientReader<v1::ListAllocationsResponse>> WatchAllocations(
      grpc::ClientContext* context);

 private:
  // Fills `context` with the deadline and fail-fast behaviour of a call.
  void Prepare(grpc::ClientContext* context, std::optional<Deadline> deadline) const;
  // An RPC failure as the shim reports it: the code kept, the message naming topologyd.
  absl::Status Failure(const grpc::Status& status, std::string_view call) const;

  const std::string socket_path_;
  const std::chrono::milliseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
};

}  // namespace topologyd::shim
