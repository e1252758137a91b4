// A call relayed byte for byte: whatever its declared kind (unary, streaming, or a method
// the relay has never heard of), both sides are byte streams pumped in both directions.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

namespace topologyd::cri_relay {

// Starts relaying the call of `caller` to the runtime through `stub` and returns the reactor
// gRPC drives for the caller's side. It deletes itself once both sides are done.
grpc::ServerGenericBidiReactor* StartPassThroughCall(grpc::GenericCallbackServerContext* caller,
                                                     grpc::GenericStub& stub);

}  // namespace topologyd::cri_relay
