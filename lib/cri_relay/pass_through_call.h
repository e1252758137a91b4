// A call relayed byte for byte: whatever its declared kind (unary, streaming, or a method
// the relay has never heard of), both sides are byte streams pumped in both directions.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay {

// Starts relaying the call of `caller` to the runtime and returns the reactor
// gRPC drives for the caller's side. It deletes itself once both sides are done.
grpc::ServerGenericBidiReactor* StartPassThroughCall(grpc::GenericCallbackServerContext* caller,
                                                     const CallEnvironment& env);

}  // namespace topologyd::cri_relay
