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
                                     cri_relay::ForwardDone done) {
  workers_->Post([this, method = call.method, deadline = CallerDeadline(call),
                  request = std::move(request), done = std::move(done)]() mutable {
    Forward forward = handlers_->Before(method, std::move(request), deadline);
    done(ToGrpc(forward.status), std::move(forward.request), std::move(forward.durability));
  });
}

void RelayInterceptor::AfterForward(const cri_relay::CallInfo& call,
                                    const std::string& forwarded_request, cri_relay::CallMemo memo,
                                    grpc::Status status, std::string response,
                                    cri_relay::InterceptDone done) {
  if (CriHandlers::AfterOnlyBooks(call.method)) {
    // No call to make: answered here, one hand-off fewer before kubelet has its answer.
    handlers_->After(call.method, forwarded_request, status.ok(), response);
    // The only memo Before leaves is a DurabilityWait: kubelet hears of the container only
    // once its placement is on disk, which it mostly is by the time the runtime has answered.
    auto durability = std::static_pointer_cast<DurabilityWait>(memo);
    if (durability == nullptr) return done(std::move(status), std::move(response));
    if (std::optional<absl::Status> outcome = durability->outcome(); outcome && outcome->ok()) {
      return done(std::move(status), std::move(response));
    }
    workers_->Post([this, durability = std::move(durability), forwarded = forwarded_request,
                    status = std::move(status), response = std::move(response),
                    done = std::move(done)]() mutable {
      absl::Status durable = durability->Wait();
      if (durable.ok()) return done(std::move(status), std::move(response));
      absl::Status undone =
          handlers_->AfterCreateNotDurable(forwarded, status.ok(), response, durable);
      // A creation the runtime failed keeps the runtime's error.
      done(status.ok() ? ToGrpc(undone) : std::move(status), {});
    });
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
