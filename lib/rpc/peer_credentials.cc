#include "lib/rpc/peer_credentials.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "fmt/format.h"
#include <sys/socket.h>

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

void PeerRegistry::Record(int fd, const PeerCredentials& creds) {
  std::lock_guard<std::mutex> lock(mu_);
  by_fd_[fd] = creds;
}

std::optional<PeerCredentials> PeerRegistry::Lookup(std::string_view peer) const {
  constexpr std::string_view kPrefix = "fd:";
  if (peer.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  peer.remove_prefix(kPrefix.size());
  int fd = -1;
  auto [ptr, ec] = std::from_chars(peer.data(), peer.data() + peer.size(), fd);
  if (ec != std::errc() || ptr != peer.data() + peer.size()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

}  // namespace topologyd::rpc
