// A unary call the interceptor sees before and after the runtime does.
#pragma once

#include <memory>

#include <grpcpp/generic/async_generic_service.h>

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay {

// Reads the caller's one request, passes it through `filter` (not null) to the runtime and
// the runtime's answer back through the filter to the caller. Returns the
// reactor gRPC drives for the caller's side; it deletes itself once both sides are done and
// the interceptor has answered or dropped its `done`.
grpc::ServerGenericBidiReactor* StartInterceptedCall(grpc::GenericCallbackServerContext* caller,
                                                     const CallEnvironment& env,
                                                     std::unique_ptr<CallFilter> filter);

}  // namespace topologyd::cri_relay
