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

// The call being intercepted.
struct CallInfo {
  std::string method;  // the full path, e.g. "/runtime.v1.RuntimeService/CreateContainer"
  std::chrono::system_clock::time_point deadline;  // the caller's; far future when it set none
};

// What the caller gets (status, and the message when OK).
using InterceptDone = std::function<void(grpc::Status status, std::string bytes)>;

// BeforeForward's answer: what to send on to the runtime.
using ForwardDone = std::function<void(grpc::Status status, std::string bytes)>;

// The interceptor's part in one call, as an Envoy filter is in one stream: it keeps whatever
// BeforeForward learnt for AfterForward. The relay deletes it with the call, once every `done`
// it was given has been called or dropped (so a filter may use itself until its `done` object
// is destroyed), and without AfterForward when the call ends before the runtime answered.
class CallFilter {
 public:
  virtual ~CallFilter() = default;

  // The request as the caller sent it. done(OK, bytes) forwards `bytes` to the runtime;
  // done(error, ignored) answers the caller with that error and forwards nothing.
  virtual void BeforeForward(std::string request, ForwardDone done) = 0;

  // The runtime's answer to what BeforeForward forwarded: its status and, when OK, its
  // response. done(status, bytes) is what the caller receives (bytes only when status is OK).
  // Not called when the caller has gone away in the meantime.
  virtual void AfterForward(grpc::Status status, std::string response, InterceptDone done) = 0;
};

class Interceptor {
 public:
  virtual ~Interceptor() = default;

  // The filter for a call starting now, or null: the call is relayed without waiting on the
  // interceptor. Only unary methods may be intercepted. Called on gRPC's thread: cheap.
  virtual std::unique_ptr<CallFilter> Intercept(const CallInfo& call) = 0;
};

}  // namespace topologyd::cri_relay
