// UdsListener: the daemon's listening Unix socket and its accept loop.
//
// It creates the socket's directory (mode 0750) if missing, replaces a stale socket file,
// sets the socket's mode and group, and accepts connections on its own thread, handing
// each connected fd to `on_connection` (which takes ownership). Accepting ourselves, rather
// than letting gRPC listen, is what lets every connection's SO_PEERCRED be recorded.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include <sys/types.h>

namespace topologyd::rpc {

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

  // Starts the accept thread. `on_connection(fd)` runs on that thread.
  void Start(std::function<void(int fd)> on_connection);
  // Stops accepting, joins the thread and removes the socket file. Idempotent.
  void Stop();

 private:
  UdsListener(std::string path, int listen_fd, int wake_fd);
  void AcceptLoop();

  std::string path_;
  int listen_fd_;
  int wake_fd_;  // eventfd that interrupts poll() on Stop()
  std::function<void(int)> on_connection_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace topologyd::rpc
