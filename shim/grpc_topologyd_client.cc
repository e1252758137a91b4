#include "shim/grpc_topologyd_client.h"

#include "fmt/format.h"

namespace topologyd::shim {
namespace {

absl::Status FailureAt(std::string_view socket_path, const grpc::Status& status,
                       std::string_view call) {
  return absl::Status(
      static_cast<absl::StatusCode>(status.error_code()),
      fmt::format("topologyd at {} did not answer {}: {}", socket_path, call,
                  status.error_message().empty() ? "no reason given" : status.error_message()));
}

}  // namespace

GrpcTopologydClient::GrpcTopologydClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout) {
  grpc::ChannelArguments args;
  // The daemon restarts in a second or two; the default back-off would keep the shim away
  // for longer than that after the first failed attempt. (Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS:
  // gRPC takes the connect timeout from it, and a short one fails handshakes with a busy daemon.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ =
      grpc::CreateCustomChannel("unix://" + socket_path_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Topologyd::NewStub(channel_);
}

void GrpcTopologydClient::Prepare(grpc::ClientContext* context,
                                  std::optional<Deadline> deadline) const {
  Deadline own = std::chrono::system_clock::now() + timeout_;
  context->set_deadline(deadline && *deadline < own ? *deadline : own);
}

absl::Status GrpcTopologydClient::Failure(const grpc::Status& status, std::string_view call) const {
  return FailureAt(socket_path_, status, call);
}

absl::StatusOr<v1::PlanContainerResponse> GrpcTopologydClient::PlanContainer(
    const v1::PlanContainerRequest& request, std::optional<Deadline> deadline) {
  grpc::ClientContext context;
  Prepare(&context, deadline);
  v1::PlanContainerResponse response;
  grpc::Status status = stub_->PlanContainer(&context, request, &response);
  if (!status.ok()) return Failure(status, "PlanContainer");
  return response;
}

void GrpcTopologydClient::AwaitDurableAsync(const v1::AdmitResponse& admitted,
                                            std::optional<Deadline> deadline,
                                            std::function<void(absl::Status)> done) {
  // Lives until gRPC has called back.
  struct Call {
    grpc::ClientContext context;
    v1::AwaitDurableRequest request;
    v1::AwaitDurableResponse response;
  };
  auto call = std::make_shared<Call>();
  Prepare(&call->context, deadline);
  call->request.set_state_generation(admitted.state_generation());
  call->request.set_instance(admitted.instance());
  stub_->async()->AwaitDurable(
      &call->context, &call->request, &call->response,
      [call, socket_path = socket_path_, done = std::move(done)](grpc::Status status) {
        done(status.ok() ? absl::OkStatus() : FailureAt(socket_path, status, "AwaitDurable"));
      });
}

absl::StatusOr<v1::AllocateResponse> GrpcTopologydClient::Allocate(const std::string& pod_uid,
                                                                   const std::string& container,
                                                                   const std::string& container_id,
                                                                   const std::string& cgroup) {
  grpc::ClientContext context;
  Prepare(&context, std::nullopt);
  v1::AllocateRequest request;
  request.set_pod_uid(pod_uid);
  request.set_container_name(container);
  request.set_container_id(container_id);
  request.set_cgroup(cgroup);
  v1::AllocateResponse response;
  grpc::Status status = stub_->Allocate(&context, request, &response);
  if (!status.ok()) return Failure(status, "Allocate");
  return response;
}

absl::Status GrpcTopologydClient::Release(const std::string& pod_uid, const std::string& container,
                                          const std::string& container_id) {
  grpc::ClientContext context;
  Prepare(&context, std::nullopt);
  v1::ReleaseRequest request;
  request.set_pod_uid(pod_uid);
  request.set_container_name(container);
  request.set_container_id(container_id);
  v1::ReleaseResponse response;
  grpc::Status status = stub_->Release(&context, request, &response);
  if (!status.ok()) return Failure(status, "Release");
  return absl::OkStatus();
}

absl::StatusOr<v1::ListAllocationsResponse> GrpcTopologydClient::ListAllocations() {
  grpc::ClientContext context;
  Prepare(&context, std::nullopt);
  v1::ListAllocationsResponse response;
  grpc::Status status = stub_->ListAllocations(&context, v1::ListAllocationsRequest(), &response);
  if (!status.ok()) return Failure(status, "ListAllocations");
  return response;
}

std::unique_ptr<grpc::ClientReader<v1::ListAllocationsResponse>>
GrpcTopologydClient::WatchAllocations(grpc::ClientContext* context) {
  return stub_->WatchAllocations(context, v1::WatchAllocationsRequest());
}

}  // namespace topologyd::shim
