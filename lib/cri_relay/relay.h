// Relay: a transparent gRPC relay on a Unix socket, in front of a container runtime.
//
// Every call that reaches the listening socket is sent on to the runtime under the same
// method name, whatever the method (unary, streaming, or one the relay has never heard of),
// as raw bytes: messages, the caller's metadata (less gRPC's own keys), deadline and
// cancellation one way; messages, initial and trailing metadata and the full status the
// other. An optional Interceptor sees and may edit or refuse the unary calls it claims;
// the other calls never wait on it, nor on any lock shared between calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include <grpcpp/channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/server.h>

#include "lib/cri_relay/interceptor.h"
#include "lib/cri_relay/shutdown_gate.h"

namespace topologyd::cri_relay {

struct RelayOptions {
  std::string listen_path;      // the Unix socket the callers (kubelet) connect to
  std::string upstream_target;  // the runtime, e.g. "unix:///run/containerd/containerd.sock"
  int max_message_bytes = 16 * 1024 * 1024;  // both directions, on both sides
  uint32_t socket_mode = 0660;
  // Reconnection to the runtime: gRPC's defaults (1 s, growing to 120 s) would leave the
  // relay answering UNAVAILABLE for minutes after a runtime restart.
  int reconnect_backoff_ms = 100;
  int max_reconnect_backoff_ms = 1000;
  // Full paths ("/runtime.v1.RuntimeService/ListContainers") of the methods the caller and the
  // runtime both declare unary: those the relay passes on as unary calls, which costs fewer
  // gRPC reactions than its byte streams. Any other method, including one absent here because
  // the relay has never heard of it, is relayed as a byte stream.
  std::set<std::string, std::less<>> unary_methods;
};

class RelayService;

class Relay {
 public:
  // Listens on options.listen_path (a stale socket file there is removed; any other file, or
  // a socket someone serves on, is an error naming the path) and relays to
  // options.upstream_target, which need not be up yet. `interceptor` may be null; otherwise
  // it must outlive the relay's Shutdown().
  static absl::StatusOr<std::unique_ptr<Relay>> Start(const RelayOptions& options,
                                                      Interceptor* interceptor);
  ~Relay();  // Shutdown(now)
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Stops accepting calls, lets calls in flight finish until `deadline`, then cancels them
  // (each caller gets an error, each runtime call is cancelled), and returns once every call
  // is done and no interceptor method is running. A `done` the interceptor still holds may
  // be called later and is ignored. Later calls of Shutdown do nothing.
  void Shutdown(std::chrono::system_clock::time_point deadline);

  // The channel to the runtime, for the shim's own typed calls. Drop the last reference on a
  // thread of your own, not in a gRPC callback (call_support.h, CallEnvironment, says why).
  std::shared_ptr<grpc::Channel> upstream_channel() const { return channel_; }
  const std::string& listen_path() const { return listen_path_; }

 private:
  Relay(std::string listen_path, std::shared_ptr<grpc::Channel> channel);

  const std::string listen_path_;
  const std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  ShutdownGate interceptor_calls_;
  ShutdownGate runtime_contexts_;
  std::unique_ptr<RelayService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::once_flag shutdown_once_;
};

}  // namespace topologyd::cri_relay
