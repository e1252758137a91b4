#include "lib/cri_relay/intercepted_call.h"

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "fmt/format.h"

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay {
namespace {

// The call goes through these phases in order; a cancelled caller is answered at once in
// every phase but kForwarding, where cancelling the runtime call brings its status back.
enum class Phase {
  kReadingRequest,
  kBeforeForward,  // the interceptor holds the request
  kForwarding,     // the runtime holds it
  kAfterForward,   // the interceptor holds the answer
  kFinished,       // the caller has its status
};

// gRPC never runs a reaction inside a Start* or Finish call, so those are made with `mu_`
// held; that is what makes an answer arriving from the interceptor's thread and a
// cancellation arriving from gRPC's agree on which one finishes the caller.
class InterceptedCall {
 public:
  InterceptedCall(grpc::GenericCallbackServerContext* caller_context, const CallEnvironment& env,
                  std::unique_ptr<CallFilter> filter)
      : caller_context_(caller_context),
        env_(env),
        method_(caller_context->method()),
        filter_(std::move(filter)),
        caller_(this) {
    absl::MutexLock lock(&mu_);
    env_.runtime_contexts.Join();
    runtime_context_ = grpc::ClientContext::FromCallbackServerContext(*caller_context);
    CopyCallerMetadata(*caller_context, *runtime_context_);
    caller_.StartRead(&request_buffer_);
  }

  ~InterceptedCall() {
    absl::MutexLock lock(&mu_);
    ReleaseRuntimeContext();
  }

  grpc::ServerGenericBidiReactor* caller_reactor() { return &caller_; }

 private:
  class CallerSide final : public grpc::ServerGenericBidiReactor {
   public:
    explicit CallerSide(InterceptedCall* call) : call_(call) {}
    void OnReadDone(bool ok) override { call_->OnCallerReadDone(ok); }
    void OnCancel() override { call_->OnCallerCancel(); }
    void OnDone() override { call_->Unref(); }

   private:
    InterceptedCall* const call_;
  };

  // The `done` handed to the interceptor: one answer, from any thread; dropped unanswered, it
  // answers INTERNAL so that the caller is not left waiting. It holds a reference.
  class Answer {
   public:
    using Handler = void (InterceptedCall::*)(grpc::Status, std::string);
    Answer(InterceptedCall* call, Handler handler) : call_(call), handler_(handler) {
      call_->refs_.fetch_add(1, std::memory_order_relaxed);
    }
    ~Answer() {
      if (!answered_.load()) {
        (call_->*handler_)(grpc::Status(grpc::StatusCode::INTERNAL,
                                        "the CRI relay's interceptor dropped the call unanswered"),
                           {});
      }
      call_->Unref();
    }
    void operator()(grpc::Status status, std::string bytes) {
      if (answered_.exchange(true)) return;
      (call_->*handler_)(std::move(status), std::move(bytes));
    }

   private:
    InterceptedCall* const call_;
    const Handler handler_;
    std::atomic<bool> answered_{false};
  };

  // ForwardDone and InterceptDone have the same shape.
  std::function<void(grpc::Status, std::string)> MakeDone(Answer::Handler handler) {
    auto answer = std::make_shared<Answer>(this, handler);
    return [answer](grpc::Status status, std::string bytes) {
      (*answer)(std::move(status), std::move(bytes));
    };
  }

  // The request goes to the interceptor as soon as it is read: a unary caller half-closes with
  // it, and the relay does not wait to see that.
  void OnCallerReadDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      if (phase_ != Phase::kReadingRequest) return;
      if (!ok) {
        FinishCaller(grpc::Status(
            grpc::StatusCode::INTERNAL,
            fmt::format("{} is intercepted as a unary method but the caller sent no request "
                        "message",
                        method_)));
        return;
      }
      request_ = ToBytes(request_buffer_);
      phase_ = Phase::kBeforeForward;
    }
    ShutdownGateScope scope(env_.interceptor_calls);
    if (!scope.open()) {
      Forward(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the CRI relay is shutting down"), {});
      return;
    }
    filter_->BeforeForward(std::move(request_), MakeDone(&InterceptedCall::Forward));
  }

  // The interceptor's answer to BeforeForward.
  void Forward(grpc::Status status, std::string bytes) {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kBeforeForward) return;  // the caller went away meanwhile
    if (!status.ok()) {
      FinishCaller(status);
      return;
    }
    phase_ = Phase::kForwarding;
    request_buffer_ = ToByteBuffer(bytes);
    refs_.fetch_add(1, std::memory_order_relaxed);  // for OnRuntimeDone
    runtime_pending_ = true;
    response_buffer_.Clear();
    env_.stub.UnaryCall(
        runtime_context_.get(), method_, grpc::StubOptions(), &request_buffer_, &response_buffer_,
        [this](grpc::Status runtime_status) { OnRuntimeDone(std::move(runtime_status)); });
  }

  void OnRuntimeDone(grpc::Status status) {
    bool ask_interceptor = false;
    {
      absl::MutexLock lock(&mu_);
      runtime_pending_ = false;
      if (status.ok() && !response_buffer_.Valid()) {
        // gRPC's unary client lets an OK status without a message through.
        status = grpc::Status(
            grpc::StatusCode::INTERNAL,
            fmt::format("{} is intercepted as a unary method but the runtime answered no message",
                        method_));
      }
      if (status.ok()) response_ = ToBytes(response_buffer_);
      if (phase_ == Phase::kFinished) {
        ReleaseRuntimeContext();
      } else if (caller_cancelled_) {
        FinishCaller(status);
      } else {
        phase_ = Phase::kAfterForward;
        ask_interceptor = true;
      }
    }
    if (ask_interceptor) {
      ShutdownGateScope scope(env_.interceptor_calls);
      if (scope.open()) {
        std::string response = status.ok() ? std::move(response_) : std::string();
        filter_->AfterForward(std::move(status), std::move(response),
                              MakeDone(&InterceptedCall::Reply));
      } else {
        Reply(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the CRI relay is shutting down"), {});
      }
    }
    Unref();
  }

  // The interceptor's answer to AfterForward.
  void Reply(grpc::Status status, std::string bytes) {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kAfterForward) return;  // the caller went away meanwhile
    FinishCaller(status, &bytes);
  }

  void OnCallerCancel() {
    absl::MutexLock lock(&mu_);
    caller_cancelled_ = true;
    if (phase_ == Phase::kForwarding) {
      runtime_context_->TryCancel();  // OnRuntimeDone then finishes the caller
    } else if (phase_ != Phase::kFinished) {
      FinishCaller(grpc::Status(grpc::StatusCode::CANCELLED, "the caller cancelled the call"));
    }
  }

  // The caller's status, with `response` when it is OK; once the runtime call is done (or
  // was never made), which is when its metadata is complete.
  void FinishCaller(const grpc::Status& status, const std::string* response = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (phase_ == Phase::kFinished) return;
    if (phase_ == Phase::kForwarding || phase_ == Phase::kAfterForward) {
      CopyRuntimeInitialMetadata(*runtime_context_, *caller_context_);
      CopyRuntimeTrailingMetadata(*runtime_context_, *caller_context_);
    }
    phase_ = Phase::kFinished;
    if (status.ok() && response != nullptr) {
      response_buffer_ = ToByteBuffer(*response);
      caller_.StartWriteAndFinish(&response_buffer_, grpc::WriteOptions(), status);
    } else {
      caller_.Finish(status);
    }
    if (!runtime_pending_) ReleaseRuntimeContext();
  }

  // The call is over on the runtime's side and the caller has its status: the runtime context
  // goes now, whatever the interceptor still holds (CallEnvironment says why).
  void ReleaseRuntimeContext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (runtime_context_ == nullptr) return;
    runtime_context_.reset();
    env_.runtime_contexts.Leave();
  }

  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  grpc::GenericCallbackServerContext* const caller_context_;
  const CallEnvironment env_;
  const std::string method_;
  // Deleted with the call: after every `done` it was given is gone.
  const std::unique_ptr<CallFilter> filter_;
  CallerSide caller_;
  // One reference for the caller side's OnDone; the runtime side and every `done` handed to
  // the interceptor add theirs.
  std::atomic<int> refs_{1};

  absl::Mutex mu_;
  std::unique_ptr<grpc::ClientContext> runtime_context_ ABSL_GUARDED_BY(mu_);
  bool runtime_pending_ ABSL_GUARDED_BY(mu_) = false;  // started, its OnDone not yet run
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kReadingRequest;
  bool caller_cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::string request_;               // as the caller sent it
  grpc::ByteBuffer request_buffer_;   // the read from the caller, then the write on
  grpc::ByteBuffer response_buffer_;  // the read from the runtime, then the reply
  std::string response_;
};

}  // namespace

grpc::ServerGenericBidiReactor* StartInterceptedCall(grpc::GenericCallbackServerContext* caller,
                                                     const CallEnvironment& env,
                                                     std::unique_ptr<CallFilter> filter) {
  return (new InterceptedCall(caller, env, std::move(filter)))->caller_reactor();
}

}  // namespace topologyd::cri_relay
