// The daemon's start-up and teardown steps run in this process: a real gRPC call over the Unix
// socket, a clean stop, and what the stop leaves for the next start (the state directory lock
// released, the admitted pod in the checkpoint), with no child process to manage.
#include <chrono>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include <grpcpp/grpcpp.h>

#include "daemon/daemon.h"
#include "tests/integration/api_pods.h"
#include "tests/integration/in_process_client.h"
#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;

v1::StatusResponse Status(const daemon::Daemon& d) {
  grpc::ClientContext context;
  Deadline(context);
  v1::StatusResponse status;
  grpc::Status s = Connect(d)->Status(&context, v1::StatusRequest(), &status);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return status;
}

TEST(DaemonInProcessTest, StartAdmitStopAndStartAgain) {
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path()));
  {
    daemon::Daemon first(dir.File("config.yaml"));
    ASSERT_EQ(first.Start(), 0);
    EXPECT_EQ(first.socket_path(), dir.File("topologyd.sock"));

    // The state directory is locked while the first one runs: a second start fails at that
    // step and tears down what it had done.
    daemon::Daemon second(dir.File("config.yaml"));
    EXPECT_EQ(second.Start(), 1);

    v1::AdmitRequest request;
    *request.mutable_pod() = GuaranteedPod("p1", "2");
    grpc::ClientContext context;
    Deadline(context);
    v1::AdmitResponse admitted;
    grpc::Status s = Connect(first)->Admit(&context, request, &admitted);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(admitted.admitted()) << admitted.message();
    EXPECT_FALSE(admitted.containers(0).cpus().empty());

    EXPECT_EQ(first.Stop(), 0);
  }
  // Stopped and destroyed: the lock is free and the final checkpoint holds the pod.
  daemon::Daemon again(dir.File("config.yaml"));
  ASSERT_EQ(again.Start(), 0);
  EXPECT_EQ(Status(again).admitted_pods(), 1U);
  EXPECT_EQ(again.Stop(), 0);
}

}  // namespace
}  // namespace topologyd::testing
