#include "tests/support/containerd/cri_channel.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace topologyd::testing::containerd {

std::shared_ptr<grpc::Channel> CriChannel(const std::string& endpoint) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  // kubelet's limit; verbose statuses carry the whole OCI spec.
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  std::string target = endpoint.rfind("unix:", 0) == 0 ? endpoint : "unix://" + endpoint;
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

bool SocketAccepts(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace topologyd::testing::containerd
