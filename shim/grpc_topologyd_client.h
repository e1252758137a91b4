// The shim's calls to topologyd over its Unix socket, each with a deadline: the configured
// timeout, or kubelet's remaining deadline when that is shorter, so a clear "topologyd did not
// answer" reaches kubelet before kubelet gives up on the call itself.
//
// Thread-safe (one channel, shared by every caller).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "topologyd/v1/topologyd.grpc.pb.h"

#include "shim/topologyd_client.h"

namespace topologyd::shim {

class GrpcTopologydClient final : public TopologydClient {
 public:
  GrpcTopologydClient(std::string socket_path, std::chrono::milliseconds timeout);

  const std::string& socket_path() const { return socket_path_; }

  absl::StatusOr<v1::PlanContainerResponse> PlanContainer(
      const v1::PlanContainerRequest& request, std::optional<Deadline> deadline) override;
  void AwaitDurableAsync(const v1::AdmitResponse& admitted, std::optional<Deadline> deadline,
                         std::function<void(absl::Status)> done) override;
  absl::StatusOr<v1::AllocateResponse> Allocate(const std::string& pod_uid,
                                                const std::string& container,
                                                const std::string& container_id,
                                                const std::string& cgroup) override;
  absl::Status Release(const std::string& pod_uid, const std::string& container,
                       const std::string& container_id) override;
  absl::StatusOr<v1::ListAllocationsResponse> ListAllocations() override;

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
