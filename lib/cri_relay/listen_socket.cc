#include "lib/cri_relay/listen_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "fmt/format.h"

namespace topologyd::cri_relay {
namespace {

sockaddr_un UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Only a refused connection proves a socket stale: taking over a live one would leave two
// relays each believing it serves kubelet.
bool AcceptsConnections(const std::string& path) {
  // Non-blocking: a wedged server with a full backlog must not hang start-up (EAGAIN then
  // says someone listens all the same).
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_un addr = UnixAddress(path);
  const bool listening =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 || errno == EAGAIN;
  ::close(fd);
  return listening;
}

}  // namespace

absl::Status PrepareListenPath(const std::string& path) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(
        fmt::format("CRI relay socket path \"{}\" must be non-empty and shorter than {} bytes",
                    path, sizeof(sockaddr_un::sun_path)));
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        fmt::format("cannot listen on {}: its directory {} does not exist", path, dir.string()));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(
        fmt::format("cannot listen on {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        fmt::format("cannot listen on {}: a file that is not a socket is in the way", path));
  }
  if (AcceptsConnections(path)) {
    return absl::FailedPreconditionError(
        fmt::format("cannot listen on {}: another process is serving on it; stop it first", path));
  }
  if (::unlink(path.c_str()) != 0) {
    return absl::FailedPreconditionError(fmt::format(
        "cannot listen on {}: cannot remove the stale socket: {}", path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

std::string DescribeBindFailure(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fmt::format("socket: {}", std::strerror(errno));
  sockaddr_un addr = UnixAddress(path);
  std::string reason = "gRPC could not bind it (a bind of our own succeeded)";
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    reason = fmt::format("bind: {}", std::strerror(errno));
  } else {
    ::unlink(path.c_str());
  }
  ::close(fd);
  return reason;
}

}  // namespace topologyd::cri_relay
