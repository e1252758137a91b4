// The gRPC client side of topoctl's online commands: connecting to the daemon's socket and
// turning RPC failures into a message on stderr and topoctl's exit code.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topoctl {

// A stub on unix://<socket>. Connection problems surface on the first call.
std::unique_ptr<topologyd::v1::Topologyd::Stub> ConnectToDaemon(const std::string& socket);

// A context with a deadline, so a wedged daemon cannot hang a script.
std::unique_ptr<grpc::ClientContext> CallContext(
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Prints "topoctl: <what>: <status message>" (with a hint when the daemon is unreachable)
// and returns the exit code for it.
int ReportRpcError(const std::string& what, const grpc::Status& status, const std::string& socket);

}  // namespace topoctl
