// ConnectionGate: what becomes of each connection the listener accepts.
//
// It records the peer's credentials for the service's checks and holds every uid to a cap
// of open connections, so that one client holding or leaking connections cannot use up the
// daemon's file descriptors. A connection beyond the cap is still handed to gRPC, so that
// the client hears why: every topologyd.v1 call on it gets RESOURCE_EXHAUSTED naming the uid
// and the cap. It is shut down after a grace period (ShutDownRefused, called periodically),
// and while many refused connections are pending, further ones are closed at once.
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lib/os/clock.h"
#include "lib/rpc/peer_credentials.h"

namespace topologyd::rpc {

struct ConnectionGateOptions {
  PeerRegistry* peers = nullptr;
  std::function<void(int fd)> serve;  // hands a connection to gRPC, which owns it from then on
  std::function<uint32_t()> cap;      // the current per-uid cap (it reloads)
  std::string cap_key = "socket.maxConnectionsPerUid";  // the setting, for the refusal
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> info;
  std::chrono::milliseconds refused_grace{1000};
  size_t max_refused_pending = 32;
  const os::Clock* clock = &os::DefaultClock();  // when grace periods end; tests move it on
};

class ConnectionGate {
 public:
  explicit ConnectionGate(ConnectionGateOptions options);
  ~ConnectionGate();  // closes its handles on refused connections without shutting them down

  // Takes ownership of an accepted connection.
  void Accept(int fd);
  // Shuts down the refused connections whose grace period has passed.
  void ShutDownRefused();

 private:
  struct Refused {
    int handle;  // a duplicate of gRPC's fd: shutdown() through it reaches the same socket
    std::chrono::steady_clock::time_point deadline;
  };
  void ShutDownRefusedLocked(std::chrono::steady_clock::time_point now);

  ConnectionGateOptions options_;
  std::mutex mu_;
  std::vector<Refused> refused_;
  // Uids refused since their warning, with how many connections: one warning per episode.
  std::map<uid_t, uint64_t> over_cap_;
};

}  // namespace topologyd::rpc
