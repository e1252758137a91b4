// A gRPC channel to a CRI endpoint (containerd's socket or a relay's) that reconnects quickly:
// gRPC's default backoff after a failed connect grows to seconds, which a test that restarts
// the server would spend waiting.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>

namespace topologyd::testing::containerd {

// `endpoint` is a socket path or a "unix://" URI.
std::shared_ptr<grpc::Channel> CriChannel(const std::string& endpoint);

// True once something accepts a connection on the unix socket at `path`.
bool SocketAccepts(const std::string& path);

}  // namespace topologyd::testing::containerd
