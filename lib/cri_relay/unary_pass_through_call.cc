#include "lib/cri_relay/unary_pass_through_call.h"

#include <memory>
#include <utility>

#include "fmt/format.h"

namespace topologyd::cri_relay {
namespace {

// The caller's request goes on as soon as it is read: a unary caller half-closes with it, and
// the relay does not wait to see that. The runtime's initial metadata, response and trailing
// metadata are all known when its call completes, so they go back to the caller at once.
class UnaryPassThroughCall final : public grpc::ServerGenericBidiReactor {
 public:
  UnaryPassThroughCall(grpc::GenericCallbackServerContext* caller_context,
                       const CallEnvironment& env)
      : caller_context_(caller_context),
        stub_(env.stub),
        runtime_contexts_(env.runtime_contexts),
        runtime_context_(grpc::ClientContext::FromCallbackServerContext(*caller_context)) {
    runtime_contexts_.Join();
    CopyCallerMetadata(*caller_context, *runtime_context_);
    StartRead(&request_);
  }

  ~UnaryPassThroughCall() override {
    runtime_context_.reset();
    runtime_contexts_.Leave();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the caller went away, or half-closed without a request
      Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                          fmt::format("{} is a unary method but the caller sent no request",
                                      caller_context_->method())));
      return;
    }
    stub_.UnaryCall(runtime_context_.get(), caller_context_->method(), grpc::StubOptions(),
                    &request_, &response_,
                    [this](grpc::Status status) { OnRuntimeDone(std::move(status)); });
  }

  // Safe at any time before OnDone: gRPC cancels a runtime call that has not started yet as
  // soon as it starts.
  void OnCancel() override { runtime_context_->TryCancel(); }

  void OnDone() override { delete this; }

 private:
  void OnRuntimeDone(grpc::Status status) {
    CopyRuntimeInitialMetadata(*runtime_context_, *caller_context_);
    CopyRuntimeTrailingMetadata(*runtime_context_, *caller_context_);
    if (status.ok() && !response_.Valid()) {
      // gRPC's unary client lets an OK status without a message through.
      Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                          fmt::format("{} is a unary method but the runtime answered no message",
                                      caller_context_->method())));
    } else if (status.ok()) {
      StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
    } else {
      Finish(status);
    }
  }

  grpc::GenericCallbackServerContext* const caller_context_;
  grpc::GenericStub& stub_;
  ShutdownGate& runtime_contexts_;
  std::unique_ptr<grpc::ClientContext> runtime_context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

}  // namespace

grpc::ServerGenericBidiReactor* StartUnaryPassThroughCall(
    grpc::GenericCallbackServerContext* caller, const CallEnvironment& env) {
  return new UnaryPassThroughCall(caller, env);
}

}  // namespace topologyd::cri_relay
