// Interceptor: the hook through which a CRI shim edits the unary calls it cares about.
//
// The relay knows no CRI message: requests and responses reach the interceptor as the
// serialized bytes the caller and the runtime exchanged, and what it hands back is sent on
// as it is. Every method is called on a gRPC callback thread and must not block; its answer
// comes through `done`, which may be called later from any thread, exactly once (further
// calls are ignored; dropping it uncalled answers the caller INTERNAL).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

namespace topologyd::cri_relay {

// The call being intercepted; valid until its `done` has been called.
struct CallInfo {
  std::string method;  // the full path, e.g. "/runtime.v1.RuntimeService/CreateContainer"
  std::chrono::system_clock::time_point deadline;  // the caller's; far future when it set none
};

// What the caller gets (status, and the message when OK).
using InterceptDone = std::function<void(grpc::Status status, std::string bytes)>;

// Whatever BeforeForward wants AfterForward of the same call to have; the relay only keeps it,
// and lets it go with the call (also when AfterForward never comes).
using CallMemo = std::shared_ptr<void>;

// BeforeForward's answer: what to send on to the runtime, and a memo for AfterForward (may be
// null).
using ForwardDone = std::function<void(grpc::Status status, std::string bytes, CallMemo memo)>;

class Interceptor {
 public:
  virtual ~Interceptor() = default;

  // Whether calls of `method` go through BeforeForward and AfterForward. Only unary methods
  // may be intercepted; every other call is relayed without waiting on the interceptor.
  virtual bool Intercepts(std::string_view method) const = 0;

  // The request as the caller sent it. done(OK, bytes, memo) forwards `bytes` to the runtime;
  // done(error, ignored, ignored) answers the caller with that error and forwards nothing.
  virtual void BeforeForward(const CallInfo& call, std::string request, ForwardDone done) = 0;

  // The runtime's answer to `forwarded_request`: its status and, when OK, its response, with
  // the memo BeforeForward gave. done(status, bytes) is what the caller receives (bytes only
  // when status is OK). Not called when the caller has gone away in the meantime.
  virtual void AfterForward(const CallInfo& call, const std::string& forwarded_request,
                            CallMemo memo, grpc::Status status, std::string response,
                            InterceptDone done) = 0;
};

}  // namespace topologyd::cri_relay
