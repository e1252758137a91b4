#include "lib/rpc/connection_gate.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "fmt/format.h"

namespace topologyd::rpc {

ConnectionGate::ConnectionGate(ConnectionGateOptions options) : options_(std::move(options)) {}

ConnectionGate::~ConnectionGate() {
  for (const Refused& r : refused_) ::close(r.handle);
}

void ConnectionGate::Accept(int fd) {
  absl::StatusOr<PeerCredentials> creds = GetPeerCredentials(fd);
  if (!creds.ok()) {
    options_.warn(fmt::format("dropping a connection: {}", std::string(creds.status().message())));
    ::close(fd);
    return;
  }
  const uint32_t cap = options_.cap();
  const size_t open = options_.peers->OpenConnectionsOf(creds->uid);
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = options_.clock->Now();
  ShutDownRefusedLocked(now);
  if (open < cap) {
    if (auto it = over_cap_.find(creds->uid); it != over_cap_.end()) {
      options_.info(fmt::format("uid {} is below its cap of {} connections again; {} refused",
                                creds->uid, cap, it->second));
      over_cap_.erase(it);
    }
    options_.peers->Record(fd, *creds);
    options_.serve(fd);
    return;
  }
  std::string why = fmt::format(
      "uid {} already has {} connections open to topologyd, the most {} allows ({}); reuse a "
      "connection or close idle ones",
      creds->uid, open, options_.cap_key, cap);
  auto [it, first] = over_cap_.try_emplace(creds->uid, 0);
  ++it->second;
  if (first) {
    options_.warn(
        fmt::format("refusing connections from uid {} (pid {}): {}", creds->uid, creds->pid, why));
  }
  int handle = -1;
  if (refused_.size() < options_.max_refused_pending) {
    handle = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  }
  if (handle < 0) {
    ::close(fd);  // too many refusals pending (or no descriptor to spare): no explanation
    return;
  }
  refused_.push_back({handle, now + options_.refused_grace});
  options_.peers->Record(fd, *creds, std::move(why));
  options_.serve(fd);
}

void ConnectionGate::ShutDownRefused() {
  std::lock_guard<std::mutex> lock(mu_);
  ShutDownRefusedLocked(options_.clock->Now());
}

void ConnectionGate::ShutDownRefusedLocked(std::chrono::steady_clock::time_point now) {
  std::erase_if(refused_, [now](const Refused& r) {
    if (r.deadline > now) return false;
    // gRPC sees the connection end and closes its own fd.
    ::shutdown(r.handle, SHUT_RDWR);
    ::close(r.handle);
    return true;
  });
}

}  // namespace topologyd::rpc
