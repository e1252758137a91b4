// A client of a daemon::Daemon running in the test's own process: a stub on its socket, the
// deadline every call of these tests carries, and the admission most of them start with.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "daemon/daemon.h"
#include "tests/integration/api_pods.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {

inline std::unique_ptr<v1::Topologyd::Stub> Connect(const daemon::Daemon& d) {
  return v1::Topologyd::NewStub(
      grpc::CreateChannel("unix:" + d.socket_path(), grpc::InsecureChannelCredentials()));
}

inline void Deadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
}

// Admits GuaranteedPod(uid, cpu) on `d`; a fatal test failure unless it is admitted (call it
// under ASSERT_NO_FATAL_FAILURE).
inline void AdmitGuaranteed(const daemon::Daemon& d, const std::string& uid,
                            const std::string& cpu) {
  grpc::ClientContext context;
  Deadline(context);
  v1::AdmitRequest request;
  *request.mutable_pod() = GuaranteedPod(uid, cpu);
  v1::AdmitResponse admitted;
  const grpc::Status s = Connect(d)->Admit(&context, request, &admitted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(admitted.admitted()) << admitted.message();
}

}  // namespace topologyd::testing
