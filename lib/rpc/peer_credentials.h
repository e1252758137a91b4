// Who is calling: the kernel-verified credentials (SO_PEERCRED) of each connection on the
// daemon's Unix socket, and the allowlist check applied to every RPC.
//
// The listener accepts connections itself, records the peer's credentials under the
// connection's fd and hands the fd to gRPC, which names that peer "fd:<n>". A handler looks
// the credentials up by ServerContext::peer(). An fd number is reused only after gRPC has
// closed the old connection, and Record() overwrites the entry at accept time, so a lookup
// from a live call always finds its own connection. The registry also counts the open
// connections, overall and per uid, for the per-uid cap. Thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/config/config.h"

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
  struct Peer {
    PeerCredentials creds;
    std::string refused;  // non-empty: the connection is refused, every call gets this message
  };

  void Record(int fd, const PeerCredentials& creds, std::string refused = "");
  // `peer` is gRPC's peer string ("fd:12"); nullopt when unknown or not an fd peer.
  std::optional<Peer> Lookup(std::string_view peer) const;
  // Connections still open and not refused, of every uid or of `uid`. gRPC closes a
  // connection's fd without telling us, so an entry whose fd no longer holds the socket it
  // was recorded with is dropped first.
  size_t OpenConnections();
  size_t OpenConnectionsOf(uid_t uid);

 private:
  struct Entry {
    Peer peer;
    dev_t dev = 0;  // the socket's identity, which a reused fd number does not share
    ino_t ino = 0;
  };
  void DropClosedLocked();

  mutable std::mutex mu_;
  std::map<int, Entry> by_fd_;
};

}  // namespace topologyd::rpc
