// The topologyd daemon's life cycle as a list of named start-up steps: load the configuration
// and the machine, start the engine, the gRPC server and the Unix socket listener, tell
// systemd it is ready. Each step has its teardown; a failed start-up, and Stop(), run the
// teardowns of the steps that completed, in reverse. RunDaemon() adds the signal loop (SIGHUP
// reload, SIGTERM/SIGINT stop, watchdog pings) between Start() and Stop(); tests run Start()
// and Stop() in process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include <grpcpp/server.h>

#include "daemon/health_report.h"
#include "lib/config/config.h"
#include "lib/engine/engine.h"
#include "lib/metrics/http_endpoint.h"
#include "lib/metrics/metrics.h"
#include "lib/nrt/nrt_file_publisher.h"
#include "lib/nrt_api/nrt_api_publisher.h"
#include "lib/os/notifier.h"
#include "lib/placement/placement_syncer.h"
#include "lib/podresources/pod_resources_server.h"
#include "lib/rpc/connection_gate.h"
#include "lib/rpc/peer_credentials.h"
#include "lib/rpc/topologyd_service.h"
#include "lib/rpc/uds_listener.h"
#include "lib/state/dir_lock.h"
#include "lib/state/file_system.h"
#include "lib/topology/topology.h"

namespace topologyd::daemon {

// Not thread-safe: one thread starts, serves and stops it. Logs through spdlog; a step that
// fails logs why (the configuration step on stderr, as logging is not set up yet).
class Daemon {
 public:
  explicit Daemon(std::string config_path);
  ~Daemon();  // runs the teardowns Stop() has not run
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs the start-up steps in order; 0 when the daemon is ready, else the exit code (1) after
  // the completed steps were torn down.
  int Start();
  // The signal loop, until SIGTERM or SIGINT. Needs BlockDaemonSignals() before any thread.
  void Serve();
  // Tears the started daemon down; the exit code: 1 when the final checkpoint failed.
  int Stop();

  // After Start(): the Unix socket it listens on.
  std::string socket_path() const;

 private:
  struct Step {
    const char* name;
    absl::Status (Daemon::*start)();
    absl::Status (Daemon::*stop)();  // nullptr: nothing to undo
  };
  static std::span<const Step> Steps();

  absl::Status LoadConfiguration();
  absl::Status LoadMachine();
  absl::Status LockStateDir();
  absl::Status CreateMetrics();
  absl::Status StartEngine();
  absl::Status StartMetricsEndpoint();
  absl::Status StopMetricsEndpoint();
  absl::Status StopEngine();
  absl::Status StartNrtFile();
  absl::Status StopNrtFile();
  absl::Status StartNrtApi();
  absl::Status StopNrtApi();
  absl::Status StartPlacementSync();
  absl::Status StopPlacementSync();
  absl::Status StartServer();
  absl::Status StopServer();
  absl::Status StartListener();
  absl::Status StopListener();
  absl::Status StartPodResources();
  absl::Status StopPodResources();
  absl::Status BecomeReady();
  absl::Status StartStopping();

  // Runs the teardowns of the completed steps in reverse; the first error.
  absl::Status Unwind();
  void Reload();

  std::string config_path_;
  size_t completed_ = 0;  // steps started and not yet torn down

  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const topology::Topology> machine_;
  std::optional<state::StateDirLock> state_lock_;
  state::PosixFileSystem fs_;
  // Before the engine and the server, which report to it: destroyed after them. Null while
  // `metrics` is not configured.
  std::unique_ptr<metrics::Metrics> metrics_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<nrt::NrtFilePublisher> nrt_file_;    // with `nrt.file` only
  std::unique_ptr<nrt_api::NrtApiPublisher> nrt_api_;  // with `nrt.apiServer` only
  std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint_;
  std::unique_ptr<placement::PlacementSyncer> placement_;  // with `placement` only
  rpc::PeerRegistry peers_;
  std::unique_ptr<rpc::TopologydService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<rpc::ConnectionGate> gate_;
  std::unique_ptr<rpc::UdsListener> listener_;
  std::unique_ptr<podresources::PodResourcesServer> pod_resources_;  // null: podResources unset
  os::SdNotifier notifier_;
  std::optional<std::chrono::microseconds> watchdog_;
  std::chrono::milliseconds wait_{0};
  std::unique_ptr<HealthReport> health_;
};

// Runs the daemon with the configuration at `config_path`; returns the process exit code.
// BlockDaemonSignals() must have been called before any thread started.
int RunDaemon(const std::string& config_path);

// `--check-config`: loads and validates `config_path` (including the topology source it
// names), prints the result; returns 0 when valid.
int CheckConfig(const std::string& config_path);

}  // namespace topologyd::daemon
