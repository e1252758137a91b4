// A call of a method known to be unary, relayed as one: one request read from the caller, one
// unary call to the runtime, its answer and status written back together. Three gRPC
// reactions per call instead of the byte-stream relay's nine, for the same bytes on the wire.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include "lib/cri_relay/call_support.h"

namespace topologyd::cri_relay {

// Starts relaying the call of `caller` to the runtime and returns the reactor gRPC drives for
// the caller's side. It deletes itself once the caller has its status.
grpc::ServerGenericBidiReactor* StartUnaryPassThroughCall(
    grpc::GenericCallbackServerContext* caller, const CallEnvironment& env);

}  // namespace topologyd::cri_relay
