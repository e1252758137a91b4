#include "lib/cri_relay/pass_through_call.h"

#include <atomic>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay {
namespace {

// Two pumps, each with one operation outstanding at a time: requests (caller read → runtime
// write → caller read ...) and responses (runtime read → caller write → runtime read ...).
// The caller's status is the runtime's, sent once the runtime call is done.
//
// gRPC frees a side's stream after that side's OnDone, so no operation may start on it
// afterwards. The caller side ends only when we call Finish. The runtime side could end as
// soon as none of its operations is outstanding, so a hold keeps it open until the response
// pump is over; `runtime_closed_` records that, under `mu_`, so that the request pump never
// starts a runtime write after it. gRPC never runs a reaction inside a Start* call, so those
// calls are made with `mu_` held.
class PassThroughCall {
 public:
  PassThroughCall(grpc::GenericCallbackServerContext* caller_context, const CallEnvironment& env)
      : caller_context_(caller_context),
        runtime_contexts_(env.runtime_contexts),
        runtime_context_(grpc::ClientContext::FromCallbackServerContext(*caller_context)),
        caller_(this),
        runtime_(this) {
    runtime_contexts_.Join();
    CopyCallerMetadata(*caller_context, *runtime_context_);
    env.stub.PrepareBidiStreamingCall(runtime_context_.get(), caller_context->method(),
                                      grpc::StubOptions(), &runtime_);
    runtime_.AddHold();
    caller_.StartRead(&request_);
    runtime_.StartCall();
  }

  ~PassThroughCall() {
    runtime_context_.reset();
    runtime_contexts_.Leave();
  }

  grpc::ServerGenericBidiReactor* caller_reactor() { return &caller_; }

 private:
  class CallerSide final : public grpc::ServerGenericBidiReactor {
   public:
    explicit CallerSide(PassThroughCall* call) : call_(call) {}
    void OnReadDone(bool ok) override { call_->OnCallerReadDone(ok); }
    void OnWriteDone(bool ok) override { call_->OnCallerWriteDone(ok); }
    void OnCancel() override { call_->runtime_context_->TryCancel(); }
    void OnDone() override { call_->Unref(); }

   private:
    PassThroughCall* const call_;
  };

  class RuntimeSide final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit RuntimeSide(PassThroughCall* call) : call_(call) {}
    void OnReadInitialMetadataDone(bool ok) override { call_->OnRuntimeInitialMetadata(ok); }
    void OnReadDone(bool ok) override { call_->OnRuntimeReadDone(ok); }
    void OnWriteDone(bool ok) override { call_->OnRuntimeWriteDone(ok); }
    void OnDone(const grpc::Status& status) override { call_->OnRuntimeDone(status); }

   private:
    PassThroughCall* const call_;
  };

  // Request pump.
  void OnCallerReadDone(bool ok) {
    absl::MutexLock lock(&mu_);
    if (runtime_closed_) return;  // the runtime has answered; later requests have nowhere to go
    if (ok) {
      runtime_.StartWrite(&request_);
    } else {
      runtime_.StartWritesDone();  // the caller half-closed (or went away)
    }
  }

  void OnRuntimeWriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    // A failed write means the runtime call is ending; its status reaches the caller.
    if (ok && !caller_finished_) caller_.StartRead(&request_);
  }

  // Response pump.
  void OnRuntimeInitialMetadata(bool ok) {
    if (!ok) {  // no response will come (a status-only answer, or the call failed)
      CloseRuntime();
      return;
    }
    // Sent with the caller's first message or status, which both come after this.
    CopyRuntimeInitialMetadata(*runtime_context_, *caller_context_);
    runtime_.StartRead(&response_);
  }

  void OnRuntimeReadDone(bool ok) {
    if (!ok) {
      CloseRuntime();
      return;
    }
    caller_.StartWrite(&response_);
  }

  void OnCallerWriteDone(bool ok) {
    if (ok) {
      runtime_.StartRead(&response_);
      return;
    }
    // The caller is gone: stop the runtime call too.
    runtime_context_->TryCancel();
    CloseRuntime();
  }

  // The response pump is over: no runtime operation starts after this.
  void CloseRuntime() {
    absl::MutexLock lock(&mu_);
    runtime_closed_ = true;
    runtime_.RemoveHold();
  }

  void OnRuntimeDone(const grpc::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      caller_finished_ = true;
      CopyRuntimeTrailingMetadata(*runtime_context_, *caller_context_);
      caller_.Finish(status);
    }
    Unref();
  }

  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  grpc::GenericCallbackServerContext* const caller_context_;
  ShutdownGate& runtime_contexts_;
  std::unique_ptr<grpc::ClientContext> runtime_context_;
  CallerSide caller_;
  RuntimeSide runtime_;
  grpc::ByteBuffer request_;   // the request pump's message in flight
  grpc::ByteBuffer response_;  // the response pump's message in flight
  std::atomic<int> refs_{2};   // one per side's OnDone

  absl::Mutex mu_;
  bool runtime_closed_ ABSL_GUARDED_BY(mu_) = false;
  bool caller_finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::ServerGenericBidiReactor* StartPassThroughCall(grpc::GenericCallbackServerContext* caller,
                                                     const CallEnvironment& env) {
  return (new PassThroughCall(caller, env))->caller_reactor();
}

}  // namespace topologyd::cri_relay
