// Who is calling: the kernel-verified credentials (SO_PEERCRED) of each connection on the
// daemon's Unix socket, and the allowlist check applied to every RPC.
//
// The listener accepts connections itself, records the peer's credentials under the
// connection's fd and hands the fd to gRPC, which names that peer "fd:<n>". A handler looks
// the credentials up by ServerContext::peer(). An fd number is reused only after gRPC has
// closed the old connection, and Record() overwrites the entry at accept time, so a lookup
// from a live call always finds its own connection. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "lib/config/config.h"

#include "absl/status/statusor.h"
#include <sys/types.h>

namespace topologyd::rpc {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// SO_PEERCRED of a connected Unix socket.
absl::StatusOr<PeerCredentials> GetPeerCredentials(int fd);

// True when `peer` is allowed by `allowed` (uid or primary gid listed, or sameUser and the
// peer runs as `daemon_uid`).
bool IsPeerAllowed(const config::AllowedPeers& allowed, const PeerCredentials& peer,
                   uid_t daemon_uid);

class PeerRegistry {
 public:
  void Record(int fd, const PeerCredentials& creds);
  // `peer` is gRPC's peer string ("fd:12"); nullopt when unknown or not an fd peer.
  std::optional<PeerCredentials> Lookup(std::string_view peer) const;

 private:
  mutable std::mutex mu_;
  std::map<int, PeerCredentials> by_fd_;
};

}  // namespace topologyd::rpc
