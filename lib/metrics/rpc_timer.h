// RpcTimerFactory: a gRPC server interceptor that times every unary call from its arrival to
// the status it is answered with, into Metrics::RpcFinished. Streams (WatchAllocations) are
// not timed: their length is the watcher's choice, not the daemon's speed.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include "lib/metrics/metrics.h"

namespace topologyd::metrics {

class RpcTimerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcTimerFactory(Metrics* metrics) : metrics_(metrics) {}  // must outlive the server
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  Metrics* metrics_;
};

// gRPC's name of a status code ("OK", "UNAVAILABLE", ...).
std::string_view StatusCodeName(grpc::StatusCode code);

}  // namespace topologyd::metrics
