// A unary call the interceptor sees before and after the runtime does.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include "lib/cri_relay/interceptor.h"
#include "lib/cri_relay/interceptor_gate.h"

namespace topologyd::cri_relay {

// Reads the caller's one request, passes it through `interceptor` to the runtime (through
// `stub`) and the runtime's answer back through `interceptor` to the caller. Returns the
// reactor gRPC drives for the caller's side; it deletes itself once both sides are done and
// the interceptor has answered or dropped its `done`.
grpc::ServerGenericBidiReactor* StartInterceptedCall(grpc::GenericCallbackServerContext* caller,
                                                     grpc::GenericStub& stub,
                                                     Interceptor& interceptor,
                                                     InterceptorGate& gate);

}  // namespace topologyd::cri_relay
