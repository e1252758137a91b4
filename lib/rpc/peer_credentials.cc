#include "lib/rpc/peer_credentials.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "fmt/format.h"

namespace topologyd::rpc {

absl::StatusOr<PeerCredentials> GetPeerCredentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return absl::InternalError(fmt::format("SO_PEERCRED failed: {}", std::strerror(errno)));
  }
  return PeerCredentials{.pid = cred.pid, .uid = cred.uid, .gid = cred.gid};
}

bool IsPeerAllowed(const config::AllowedPeers& allowed, const PeerCredentials& peer,
                   uid_t daemon_uid) {
  auto has = [](const std::vector<uint32_t>& ids, uint32_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  return has(allowed.uids, peer.uid) || has(allowed.gids, peer.gid) ||
         (allowed.same_user && peer.uid == daemon_uid);
}

void PeerRegistry::Record(int fd, const PeerCredentials& creds, std::string refused) {
  struct stat st {};
  ::fstat(fd, &st);  // cannot fail on the fd just accepted
  std::lock_guard<std::mutex> lock(mu_);
  by_fd_[fd] = Entry{
      .peer = {.creds = creds, .refused = std::move(refused)}, .dev = st.st_dev, .ino = st.st_ino};
}

std::optional<PeerRegistry::Peer> PeerRegistry::Lookup(std::string_view peer) const {
  constexpr std::string_view kPrefix = "fd:";
  if (peer.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  peer.remove_prefix(kPrefix.size());
  int fd = -1;
  auto [ptr, ec] = std::from_chars(peer.data(), peer.data() + peer.size(), fd);
  if (ec != std::errc() || ptr != peer.data() + peer.size()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second.peer;
}

void PeerRegistry::DropClosedLocked() {
  std::erase_if(by_fd_, [](const auto& item) {
    struct stat st {};
    return ::fstat(item.first, &st) != 0 || st.st_dev != item.second.dev ||
           st.st_ino != item.second.ino;
  });
}

size_t PeerRegistry::OpenConnections() {
  std::lock_guard<std::mutex> lock(mu_);
  DropClosedLocked();
  return std::count_if(by_fd_.begin(), by_fd_.end(),
                       [](const auto& item) { return item.second.peer.refused.empty(); });
}

size_t PeerRegistry::OpenConnectionsOf(uid_t uid) {
  std::lock_guard<std::mutex> lock(mu_);
  DropClosedLocked();
  return std::count_if(by_fd_.begin(), by_fd_.end(), [uid](const auto& item) {
    return item.second.peer.refused.empty() && item.second.peer.creds.uid == uid;
  });
}

}  // namespace topologyd::rpc
