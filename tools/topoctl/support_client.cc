#include "tools/topoctl/support_client.h"

#include <iostream>
#include <string>

#include "tools/topoctl/command.h"

namespace topoctl {

std::unique_ptr<topologyd::v1::Topologyd::Stub> ConnectToDaemon(const std::string& socket) {
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  return topologyd::v1::Topologyd::NewStub(channel);
}

std::unique_ptr<grpc::ClientContext> CallContext(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

int ReportRpcError(const std::string& what, const grpc::Status& status, const std::string& socket) {
  std::cerr << "topoctl: " << what << ": " << status.error_message();
  // UNAVAILABLE is also the daemon's own answer when its checkpoint cannot be written; the
  // hint is only for the channel failing to reach anyone.
  const bool unreachable =
      status.error_code() == grpc::StatusCode::UNAVAILABLE &&
      status.error_message().find("the change is not acknowledged") == std::string::npos;
  // A socket that is there but not ours to open: the daemon runs, so asking whether it does
  // would send the user the wrong way.
  const bool denied =
      unreachable && (status.error_message().find("Permission denied") != std::string::npos ||
                      status.error_message().find("EACCES") != std::string::npos);
  if (denied) {
    std::cerr << " (" << socket
              << " is not open to this user: run as root or as a member of the socket's group, "
                 "configuration key socket.group)";
  } else if (unreachable) {
    std::cerr << " (is topologyd running and listening on " << socket << "? use --socket)";
  }
  std::cerr << "\n";
  return kExitRefused;
}

}  // namespace topoctl
