// A real OpenStack Placement for tests (Debian's python3-placement, Zed): placement-api on a
// free loopback port with sqlite and noauth2 in a directory of the caller, stopped with SIGTERM.
// Tests skip when PlacementMissing() says why it cannot run (tools/install-deps.sh test
// installs it).
#pragma once

#include <sys/types.h>

#include <string>

namespace topologyd::testing {

// Why Placement cannot run here, or "".
std::string PlacementMissing();

class PlacementServer {
 public:
  PlacementServer() = default;
  ~PlacementServer();  // Stop()
  PlacementServer(const PlacementServer&) = delete;
  PlacementServer& operator=(const PlacementServer&) = delete;

  // Creates the database and starts the server with its files in `dir`; waits until it
  // answers `GET /`. "" when it does, else why not (the server's log included).
  std::string Start(const std::string& dir);
  // SIGTERM, then waits for the exit. Safe to call twice.
  void Stop();

  const std::string& url() const { return url_; }  // http://127.0.0.1:PORT
  const std::string& log() const { return log_; }  // the server's stdout and stderr
  // Copies the log to build/Testing/<prefix>.<current test's name>.log and says where.
  void KeepLog(const std::string& prefix) const;

 private:
  std::string url_;
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace topologyd::testing
