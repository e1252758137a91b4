#include "lib/rpc/uds_listener.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "lib/common/thread_name.h"

#include "fmt/format.h"
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

namespace topologyd::rpc {
namespace {

absl::Status Fail(const std::string& path, const std::string& what) {
  return absl::FailedPreconditionError(
      fmt::format("cannot listen on {}: {}: {}", path, what, std::strerror(errno)));
}

// Whether a server accepts connections on the socket at `path`. Only a refused connection
// proves the socket stale; taking over a live one would leave two servers each believing
// it serves the node.
bool SomeoneListens(const std::string& path) {
  // Non-blocking: a wedged server with a full backlog must not hang this start-up (EAGAIN
  // then says someone listens all the same).
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const bool listening =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 || errno == EAGAIN;
  ::close(fd);
  return listening;
}

}  // namespace

absl::StatusOr<std::unique_ptr<UdsListener>> UdsListener::Create(
    const UdsListenerOptions& options) {
  const std::string& path = options.path;
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        fmt::format("socket path \"{}\" must be non-empty and shorter than {} bytes", path,
                    sizeof(addr.sun_path)));
  }
  // The socket's group, resolved before anything is created; unset: keep our own group.
  std::optional<gid_t> gid;
  if (!options.group.empty()) {
    group* gr = ::getgrnam(options.group.c_str());
    if (gr == nullptr) {
      return absl::FailedPreconditionError(
          fmt::format("cannot listen on {}: unknown group \"{}\"", path, options.group));
    }
    gid = gr->gr_gid;
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          fmt::format("cannot create socket directory {}: {}", dir.string(), ec.message()));
    }
    // Access to the socket is controlled by its directory too: owner and group only, the
    // group being the socket's, or its members could not reach the socket at all.
    ::chmod(dir.c_str(), 0750);
    if (gid && ::chown(dir.c_str(), static_cast<uid_t>(-1), *gid) != 0) {
      return absl::FailedPreconditionError(
          fmt::format("cannot give socket directory {} to group {}: {}", dir.string(),
                      options.group, std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          fmt::format("cannot listen on {}: a file that is not a socket is in the way", path));
    }
    if (SomeoneListens(path)) {
      return absl::FailedPreconditionError(
          fmt::format("cannot listen on {}: another process is serving on it (is topologyd already "
                      "running?); stop it first, or give this one another `listen` path",
                      path));
    }
    ::unlink(path.c_str());  // stale socket of a previous run
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(path, "socket");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status s = Fail(path, "bind");
    ::close(fd);
    return s;
  }
  if (::chmod(path.c_str(), options.mode) != 0) {
    absl::Status s = Fail(path, "chmod");
    ::close(fd);
    return s;
  }
  if (gid) {
    if (::chown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) {
      absl::Status s = Fail(path, "chown");
      ::close(fd);
      ::unlink(path.c_str());
      return s;
    }
  }
  if (::listen(fd, 64) != 0) {
    absl::Status s = Fail(path, "listen");
    ::close(fd);
    return s;
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    absl::Status s = Fail(path, "eventfd");
    ::close(fd);
    return s;
  }
  return std::unique_ptr<UdsListener>(new UdsListener(path, fd, wake));
}

UdsListener::UdsListener(std::string path, int listen_fd, int wake_fd)
    : path_(std::move(path)), listen_fd_(listen_fd), wake_fd_(wake_fd) {}

UdsListener::~UdsListener() {
  Stop();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void UdsListener::Start(std::function<void(int fd)> on_connection) {
  on_connection_ = std::move(on_connection);
  thread_ = std::thread([this] {
    NameThisThread("tpd-accept");
    AcceptLoop();
  });
}

void UdsListener::Stop() {
  if (stopped_.exchange(true)) return;
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  ::unlink(path_.c_str());
}

void UdsListener::AcceptLoop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (!stopped_.load()) {
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    // gRPC drives the connection from its event loop, which needs a non-blocking fd.
    int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) continue;  // e.g. the peer hung up first, or EMFILE: keep serving others
    on_connection_(conn);
  }
}

}  // namespace topologyd::rpc
