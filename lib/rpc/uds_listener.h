// UdsListener: the daemon's listening Unix socket and its accept loop.
//
// It creates the socket's directory (mode 0750) if missing, replaces a stale socket file,
// sets the socket's mode and group, and accepts connections on its own thread, handing
// each connected fd to `on_connection` (which takes ownership). Accepting ourselves, rather
// than letting gRPC listen, is what lets every connection's SO_PEERCRED be recorded.
//
// Out of file descriptors (EMFILE, ENFILE), a pending connection stays in the backlog and
// keeps the socket readable, so retrying at once would spin. The listener keeps one spare
// descriptor: it gives it up to take the pending connection and close it at once (the client
// sees the connection closed instead of waiting), then backs off when even that fails. It
// warns once per episode and says when it accepts connections again.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace topologyd::rpc {

struct UdsListenerCallbacks {
  std::function<void(int fd)> on_connection;  // takes ownership of the connection's fd
  std::function<size_t()> open_connections;   // how many are open, for the warning
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> info;
};

struct UdsListenerOptions {
  std::string path;
  uint32_t mode = 0660;
  std::string group;  // empty: leave the group as created
};

class UdsListener {
 public:
  // Binds and listens. FAILED_PRECONDITION names the path and the reason.
  static absl::StatusOr<std::unique_ptr<UdsListener>> Create(const UdsListenerOptions& options);
  ~UdsListener();

  // Starts the accept thread; every callback runs on that thread.
  void Start(UdsListenerCallbacks callbacks);
  // Stops accepting, joins the thread and removes the socket file. Idempotent.
  void Stop();

 private:
  UdsListener(std::string path, int listen_fd, int wake_fd);
  void AcceptLoop();
  // Out of descriptors: takes the pending connection with the spare descriptor and closes
  // it. False when the spare could not help (then the loop backs off).
  bool RefuseWithSpare();

  std::string path_;
  int listen_fd_;
  int wake_fd_;        // eventfd that interrupts poll() on Stop()
  int spare_fd_ = -1;  // /dev/null, given up for a moment when out of descriptors
  UdsListenerCallbacks callbacks_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace topologyd::rpc
