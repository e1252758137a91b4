// topoctl's message for a failed call (tools/topoctl/support_client.h): the hint must send the
// user the right way, so a socket they may not open does not ask whether the daemon runs.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"

namespace topoctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Reported(const grpc::Status& status) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ReportRpcError("status", status, "/run/topologyd/topologyd.sock"), kExitRefused);
  return ::testing::internal::GetCapturedStderr();
}

TEST(RpcErrorTest, ASocketThisUserMayNotOpenSaysSo) {
  // gRPC's text, as topoctl gets it when run by a user outside the socket's group.
  const std::string message =
      Reported(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "failed to connect to all addresses; last error: UNKNOWN: "
                            "unix:/run/topologyd/topologyd.sock: Permission denied"));
  EXPECT_THAT(message, HasSubstr("topoctl: status: failed to connect"));
  EXPECT_THAT(message, HasSubstr("(/run/topologyd/topologyd.sock is not open to this user: run "
                                 "as root or as a member of the socket's group"));
  EXPECT_THAT(message, Not(HasSubstr("is topologyd running")));
}

TEST(RpcErrorTest, NoDaemonAsksWhetherItRuns) {
  const std::string message =
      Reported(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "failed to connect to all addresses; last error: UNKNOWN: "
                            "unix:/run/topologyd/topologyd.sock: No such file or directory"));
  EXPECT_THAT(message, HasSubstr("(is topologyd running and listening on "
                                 "/run/topologyd/topologyd.sock? use --socket)"));
}

}  // namespace
}  // namespace topoctl
