// What both kinds of relayed call share: metadata copied between the caller's and the
// runtime's contexts, and messages as byte strings.
#pragma once

#include <string>
#include <string_view>

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>

#include "lib/cri_relay/interceptor.h"
#include "lib/cri_relay/shutdown_gate.h"

namespace topologyd::cri_relay {

// What a relayed call uses of its Relay; valid until the relay's Shutdown() has returned.
struct CallEnvironment {
  grpc::GenericStub& stub;
  // Joined for as long as a call keeps its runtime ClientContext. The context holds the
  // channel, and a channel must not be destroyed on a gRPC callback thread: should it be the
  // last user of the callback threads' completion queue, that thread would free the queue it
  // is still polling. So the relay's Shutdown waits for every context to be destroyed, and a
  // call destroys its context as soon as it is over, never waiting on the interceptor.
  ShutdownGate& runtime_contexts;
  Interceptor* interceptor;  // null: nothing is intercepted
  // Entered around every call of an interceptor method.
  ShutdownGate& interceptor_calls;
};

// Keys gRPC sets itself on every call (pseudo-headers, "grpc-*", content-type, user-agent,
// te): copying them would duplicate or contradict what the next hop's gRPC writes.
bool IsReservedMetadataKey(std::string_view key);

// The caller's metadata, reserved keys left out, onto the runtime call.
void CopyCallerMetadata(const grpc::ServerContextBase& caller, grpc::ClientContext& runtime);
// The runtime's initial metadata onto the caller's call; before the caller's first message
// or status is sent.
void CopyRuntimeInitialMetadata(const grpc::ClientContext& runtime,
                                grpc::ServerContextBase& caller);
// The runtime's trailing metadata onto the caller's call; once the runtime call is done and
// before the caller's status is sent. The status details travel in the status itself.
void CopyRuntimeTrailingMetadata(const grpc::ClientContext& runtime,
                                 grpc::ServerContextBase& caller);

std::string ToBytes(const grpc::ByteBuffer& buffer);
grpc::ByteBuffer ToByteBuffer(std::string_view bytes);

}  // namespace topologyd::cri_relay
