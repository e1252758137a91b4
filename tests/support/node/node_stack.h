// What a node runs beside the runtime: a real topologyd on this host's cgroup v1 cpuset
// hierarchy, and its front end: topologyd-shim relaying to a runtime's CRI socket, or
// topologyd-nri registered on the runtime's NRI socket; as child processes with their configs,
// sockets and logs in one directory; and topologyd's view of what it holds.
// Used by the end-to-end tests and benchmarks against containerd (with the kubelet emulator or
// a real kubelet).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include <grpcpp/grpcpp.h>

#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {

// Asynchronous effects (a pushed shared pool, a restart, kubelet's sync) get this long; a test
// fails only when one is stuck.
inline constexpr std::chrono::seconds kNodePatience{60};

// Polls `done` every 100 ms until it holds (true) or `patience` has passed (false).
bool PollUntil(const std::function<bool()>& done, std::chrono::seconds patience = kNodePatience);

// A server child process with its output in a log file.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() { Stop(SIGKILL); }
  // argv[0] is an absolute path. INTERNAL when it cannot be started.
  absl::Status Start(const std::vector<std::string>& argv, const std::string& log_path);
  // Signals it and waits for it to exit (SIGKILL after 10 s).
  void Stop(int sig);
  bool alive();

 private:
  pid_t pid_ = -1;
};

struct NodeStackOptions {
  std::string topologyd_binary;  // "" = the build's daemon/topologyd
  std::string shim_binary;       // "" = the build's shim/topologyd-shim
  std::string nri_binary;        // "" = the build's nri/topologyd-nri (TOPOLOGYD_BUILD_NRI)
  // topologyd's policy keys (YAML lines), after the socket, state and cgroup keys the stack
  // sets itself.
  std::string topologyd_policy =
      "cpuManagerPolicy: static\n"
      "reservedSystemCPUs: \"0\"\n"
      "topologyManagerPolicy: best-effort\n"
      "topologyManagerScope: container\n"
      "memoryManagerPolicy: None\n";
  // The shim's keys (YAML lines) besides its sockets.
  std::string shim_config =
      "failurePolicy: Fail\n"
      "podSpec: {sources: [estimate]}\n"
      "resync: {period: 1s}\n"
      "topologydTimeout: 3s\n";
  // The NRI plugin's keys (YAML lines) besides its sockets.
  std::string nri_config =
      "failurePolicy: Fail\n"
      "podSpec: {sources: [estimate]}\n"
      "topologydTimeout: 3s\n";
};

// The NRI plugin this build made, or "" when it was configured without TOPOLOGYD_BUILD_NRI.
std::string BuiltNriPlugin();

class NodeStack {
 public:
  // `dir`: an existing directory the caller owns (short: it holds the sockets).
  NodeStack(std::string dir, std::string runtime_socket, NodeStackOptions options = {});
  NodeStack(const NodeStack&) = delete;
  NodeStack& operator=(const NodeStack&) = delete;

  // topologyd, then the shim. Each returns once it answers, or an error with its log.
  absl::Status Start();
  absl::Status StartTopologyd();
  absl::Status StartShim();
  // Signals the process and waits for it to exit (SIGKILL after 10 s).
  void StopTopologyd(int sig) { topologyd_.Stop(sig); }
  void StopShim(int sig) { shim_.Stop(sig); }
  // topologyd-nri on the runtime's NRI socket; returns once it has registered (and the
  // runtime has synchronised it), or an error with its log.
  absl::Status StartNri(const std::string& nri_socket);
  void StopNri(int sig) { nri_.Stop(sig); }
  // How often the NRI plugin has registered with the runtime so far (its log, appended to
  // across restarts).
  int NriRegistrations() const;

  std::string topologyd_socket() const { return dir_ + "/topologyd.sock"; }
  std::string shim_socket() const { return dir_ + "/shim.sock"; }
  std::string shim_endpoint() const { return "unix://" + shim_socket(); }
  v1::Topologyd::Stub& topologyd() { return *stub_; }

  grpc::Status Allocations(v1::ListAllocationsResponse* response);
  // What topologyd holds for the container `name` of pod `uid`; nullopt if nothing.
  std::optional<v1::ContainerAllocation> Allocation(const std::string& uid,
                                                    const std::string& name);
  // The shared pool, or "<error>".
  std::string SharedPool();
  // Every log, for a failed test's output.
  std::string Logs() const;

 private:
  std::string dir_;
  std::string runtime_socket_;
  NodeStackOptions options_;
  ServerProcess topologyd_;
  ServerProcess shim_;
  ServerProcess nri_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
};

}  // namespace topologyd::testing
