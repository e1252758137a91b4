#include "shim/relay_interceptor.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "fmt/format.h"

#include "shim/cri_call.h"
#include "shim/intercepted_methods.h"

namespace topologyd::shim {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// kubelet always sets a deadline; a caller without one gets only the shim's own timeouts.
std::optional<CriCall::Deadline> CallerDeadline(const cri_relay::CallInfo& call) {
  if (call.deadline > std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    return std::nullopt;
  }
  return call.deadline;
}

// One intercepted call: its CriCall goes from the step before the runtime to the step after.
class ShimCallFilter final : public cri_relay::CallFilter {
 public:
  ShimCallFilter(const InterceptedMethod& method, std::optional<CriCall::Deadline> deadline,
                 CriHandlers* handlers, WorkQueue* workers)
      : method_(method), handlers_(handlers), workers_(workers) {
    call_.deadline = deadline;
  }

  void BeforeForward(std::string request, cri_relay::ForwardDone done) override {
    const bool decoded = method_.decode(request, call_);
    if (method_.before == nullptr) {
      // Nothing to decide: forwarded as sent, at once.
      return done(grpc::Status::OK, std::move(request));
    }
    if (!decoded) {
      return done(ToGrpc(absl::InvalidArgumentError(
                      fmt::format("topologyd-shim: cannot decode the {} request", method_.name))),
                  {});
    }
    workers_->Post([this, request = std::move(request), done = std::move(done)]() mutable {
      absl::Status status = (handlers_->*method_.before)(call_);
      if (!status.ok()) return done(ToGrpc(status), {});
      done(grpc::Status::OK, call_.edited ? EncodeRequest(call_) : std::move(request));
    });
  }

  void AfterForward(grpc::Status status, std::string response,
                    cri_relay::InterceptDone done) override {
    if (method_.after_thread == AfterThread::kRelay) {
      // No call to make: answered here, one hand-off fewer before kubelet has its answer.
      After(status.ok(), response);
      return AnswerWhenDurable(std::move(status), std::move(response), std::move(done));
    }
    workers_->Post([this, status = std::move(status), response = std::move(response),
                    done = std::move(done)]() mutable {
      After(status.ok(), response);
      // The runtime's answer goes back unchanged, its status details included.
      done(std::move(status), std::move(response));
    });
  }

 private:
  void After(bool runtime_ok, const std::string& response) {
    if (method_.after == nullptr || std::holds_alternative<std::monostate>(call_.request)) return;
    if (!runtime_ok && method_.after_when != AfterWhen::kAlways) return;
    (handlers_->*method_.after)(call_, runtime_ok ? response : std::string());
  }

  // kubelet hears of a container only once its placement is on disk, which it mostly is by
  // the time the runtime has answered.
  void AnswerWhenDurable(grpc::Status status, std::string response, cri_relay::InterceptDone done) {
    const std::shared_ptr<DurabilityWait>& durability = call_.durability;
    if (durability == nullptr) return done(std::move(status), std::move(response));
    if (std::optional<absl::Status> outcome = durability->outcome(); outcome && outcome->ok()) {
      return done(std::move(status), std::move(response));
    }
    workers_->Post([this, status = std::move(status), response = std::move(response),
                    done = std::move(done)]() mutable {
      absl::Status durable = call_.durability->Wait();
      if (durable.ok()) return done(std::move(status), std::move(response));
      absl::Status undone = handlers_->AfterCreateNotDurable(call_, status.ok(), response, durable);
      // A creation the runtime failed keeps the runtime's error.
      done(status.ok() ? ToGrpc(undone) : std::move(status), {});
    });
  }

  const InterceptedMethod& method_;
  CriHandlers* const handlers_;
  WorkQueue* const workers_;
  CriCall call_;
};

}  // namespace

std::unique_ptr<cri_relay::CallFilter> RelayInterceptor::Intercept(
    const cri_relay::CallInfo& call) {
  const InterceptedMethod* method = FindInterceptedMethod(call.method);
  if (method == nullptr) return nullptr;
  return std::make_unique<ShimCallFilter>(*method, CallerDeadline(call), handlers_, workers_);
}

}  // namespace topologyd::shim
