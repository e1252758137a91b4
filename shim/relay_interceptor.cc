#include "shim/relay_interceptor.h"

#include <chrono>

namespace topologyd::shim {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// kubelet always sets a deadline; a caller without one gets only the shim's own timeouts.
std::optional<CriHandlers::Deadline> CallerDeadline(const cri_relay::CallInfo& call) {
  if (call.deadline > std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    return std::nullopt;
  }
  return call.deadline;
}

}  // namespace

bool RelayInterceptor::Intercepts(std::string_view method) const {
  return CriHandlers::Intercepts(method);
}

void RelayInterceptor::BeforeForward(const cri_relay::CallInfo& call, std::string request,
                                     cri_relay::InterceptDone done) {
  workers_->Post([this, method = call.method, deadline = CallerDeadline(call),
                  request = std::move(request), done = std::move(done)]() mutable {
    Forward forward = handlers_->Before(method, std::move(request), deadline);
    done(ToGrpc(forward.status), std::move(forward.request));
  });
}

void RelayInterceptor::AfterForward(const cri_relay::CallInfo& call,
                                    const std::string& forwarded_request, grpc::Status status,
                                    std::string response, cri_relay::InterceptDone done) {
  if (CriHandlers::AfterOnlyBooks(call.method)) {
    // No call to make: answered here, one hand-off fewer before kubelet has its answer.
    handlers_->After(call.method, forwarded_request, status.ok(), response);
    done(std::move(status), std::move(response));
    return;
  }
  workers_->Post([this, method = call.method, forwarded = forwarded_request,
                  status = std::move(status), response = std::move(response),
                  done = std::move(done)]() mutable {
    handlers_->After(method, forwarded, status.ok(), response);
    // The runtime's answer goes back unchanged, its status details included.
    done(std::move(status), std::move(response));
  });
}

}  // namespace topologyd::shim
