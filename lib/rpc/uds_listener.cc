#include "lib/rpc/uds_listener.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "fmt/format.h"

#include "lib/common/thread_name.h"

namespace topologyd::rpc {
namespace {

// How long the accept loop leaves the socket alone when out of descriptors and the spare
// could not take the pending connection.
constexpr int kOutOfDescriptorsBackoffMs = 200;

int OpenSpare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

bool IsOutOfDescriptors(int error) {
  return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
}

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
  // Non-blocking: poll() may report a connection whose peer is gone by the time it is taken.
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
    : path_(std::move(path)), listen_fd_(listen_fd), wake_fd_(wake_fd), spare_fd_(OpenSpare()) {}

UdsListener::~UdsListener() {
  Stop();
  ::close(listen_fd_);
  ::close(wake_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
}

void UdsListener::Start(UdsListenerCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
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
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
  bool out_of_descriptors = false;  // since the warning, until a connection is accepted again
  bool backing_off = false;         // poll only the wake fd, for a while
  uint64_t refused = 0;
  while (!stopped_.load()) {
    int n = backing_off ? ::poll(fds, 1, kOutOfDescriptorsBackoffMs) : ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    if (backing_off) {
      backing_off = false;
      continue;
    }
    if (!(fds[1].revents & POLLIN)) continue;
    // gRPC drives the connection from its event loop, which needs a non-blocking fd.
    int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn >= 0) {
      if (out_of_descriptors) {
        out_of_descriptors = false;
        callbacks_.info(fmt::format(
            "accepting connections on {} again; {} refused while out of file descriptors", path_,
            refused));
        refused = 0;
      }
      callbacks_.on_connection(conn);
      continue;
    }
    const int error = errno;
    if (!IsOutOfDescriptors(error)) continue;  // e.g. the peer hung up first: serve the next
    if (!out_of_descriptors) {
      out_of_descriptors = true;
      const bool descriptors = error == EMFILE || error == ENFILE;
      callbacks_.warn(fmt::format(
          "cannot accept connections on {}: {}; {} connections open. New connections are closed "
          "at once until this clears{}",
          path_, std::strerror(error), callbacks_.open_connections(),
          descriptors ? " (raise the descriptor limit, LimitNOFILE= under systemd, or lower "
                        "socket.maxConnectionsPerUid)"
                      : ""));
    }
    if (RefuseWithSpare()) {
      ++refused;
    } else {
      backing_off = true;
    }
  }
}

bool UdsListener::RefuseWithSpare() {
  if (spare_fd_ < 0) spare_fd_ = OpenSpare();
  if (spare_fd_ < 0) return false;
  ::close(spare_fd_);
  int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn >= 0) ::close(conn);
  spare_fd_ = OpenSpare();  // when this fails, the next refusal retries it or backs off
  return conn >= 0;
}

}  // namespace topologyd::rpc
