// A client of a daemon::Daemon running in the test's own process: a stub on its socket, and
// the deadline every call of these tests carries.
#pragma once

#include <chrono>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "daemon/daemon.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {

inline std::unique_ptr<v1::Topologyd::Stub> Connect(const daemon::Daemon& d) {
  return v1::Topologyd::NewStub(
      grpc::CreateChannel("unix:" + d.socket_path(), grpc::InsecureChannelCredentials()));
}

inline void Deadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
}

}  // namespace topologyd::testing
