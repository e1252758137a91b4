// PodResourcesServer: the PodResources socket (`podResources`) with everything behind it — its
// own listener, connection gate and peer registry, and a gRPC server with PodResourcesService
// only — apart from the topologyd API's, so that its clients have their own access rule and
// connection cap and cannot reach anything else.
//
// Not thread-safe: the daemon starts, ticks and stops it from one thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include <grpcpp/server.h>

#include "lib/engine/engine.h"
#include "lib/podresources/pod_resources_service.h"
#include "lib/rpc/connection_gate.h"
#include "lib/rpc/peer_credentials.h"
#include "lib/rpc/uds_listener.h"

namespace topologyd::podresources {

struct PodResourcesServerOptions {
  engine::Engine* engine = nullptr;  // its config() must have pod_resources set
  uid_t daemon_uid = 0;
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> info;
};

class PodResourcesServer {
 public:
  // Binds the socket of the engine's `podResources` and starts serving. FAILED_PRECONDITION
  // naming the path when the socket cannot be made.
  static absl::StatusOr<std::unique_ptr<PodResourcesServer>> Start(
      PodResourcesServerOptions options);
  ~PodResourcesServer();  // Stop()

  // Stops accepting, removes the socket, ends the calls in progress (they answer at once).
  // Idempotent.
  void Stop();
  // Closes connections refused for their uid's cap once their grace period has passed.
  void ShutDownRefused();

 private:
  PodResourcesServer() = default;

  rpc::PeerRegistry peers_;
  std::unique_ptr<PodResourcesService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<rpc::ConnectionGate> gate_;
  std::unique_ptr<rpc::UdsListener> listener_;
  bool stopped_ = false;
};

}  // namespace topologyd::podresources
