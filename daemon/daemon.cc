#include "daemon/daemon.h"

#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>

#include "daemon/health_report.h"
#include "lib/admission/node_policy.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/version.h"
#include "lib/config/config_loader.h"
#include "lib/engine/cpuset_enforcer.h"
#include "lib/engine/engine.h"
#include "lib/os/logging.h"
#include "lib/os/notifier.h"
#include "lib/os/signals.h"
#include "lib/rpc/connection_gate.h"
#include "lib/rpc/peer_credentials.h"
#include "lib/rpc/topologyd_service.h"
#include "lib/rpc/uds_listener.h"
#include "lib/state/dir_lock.h"
#include "lib/state/file_system.h"
#include "lib/topology/hwloc_source.h"

#include "fmt/format.h"
#include "spdlog/spdlog.h"
#include <sys/stat.h>

namespace topologyd::daemon {
namespace {

using std::chrono::milliseconds;

// Our RPCs are callback calls on gRPC's own threads; the sync server threads serve only
// reflection, so a small pool bounds them.
constexpr int kMaxServerThreads = 16;
constexpr milliseconds kShutdownGrace{5000};
constexpr milliseconds kIdleSignalWait{1000};

topology::TopologySource SourceOf(const config::Config& config) {
  switch (config.topology.source) {
    case config::TopologySourceConfig::Kind::kXml:
      return topology::TopologySource::Xml(config.topology.path);
    case config::TopologySourceConfig::Kind::kSynthetic:
      return topology::TopologySource::Synthetic(config.topology.description);
    case config::TopologySourceConfig::Kind::kLive:
      break;
  }
  return topology::TopologySource::Live();
}

void LogCgroupWrite(const cgroup::WriteRecord& w) {
  std::string where = w.cgroup.empty() ? "<root>" : w.cgroup;
  if (w.dry_run) {
    spdlog::info("dry run: would write \"{}\" to {}/{}", w.value, where, w.file);
  } else if (w.status.ok()) {
    spdlog::debug("wrote \"{}\" to {}/{}", w.value, where, w.file);
  } else {
    spdlog::warn("cgroup write \"{}\" to {}/{} failed: {} (reconcile retries)", w.value, where,
                 w.file, w.status.message());
  }
}

void LogReload(const engine::ReloadRecord& record, const std::string& path) {
  if (!record.error.empty()) {
    spdlog::error("reload of {} rejected, keeping the running configuration:\n{}", path,
                  record.error);
    return;
  }
  if (!record.applied_keys.empty()) {
    spdlog::info("reload applied: {}", fmt::join(record.applied_keys, ", "));
  }
  if (!record.refused_keys.empty()) {
    spdlog::warn("reload refused restart-only keys (restart topologyd to change them): {}",
                 fmt::join(record.refused_keys, ", "));
  }
  if (record.applied_keys.empty() && record.refused_keys.empty()) {
    spdlog::info("reload: configuration unchanged");
  }
  for (const std::string& warning : record.warnings) spdlog::warn("reload: {}", warning);
}

// What start-up needs from this host besides the file, checked without changing anything;
// each problem as "key: what is wrong".
std::vector<std::string> HostProblems(const config::Config& config) {
  std::vector<std::string> problems;
  // The listener chowns the socket to this group after binding it.
  if (!config.socket.group.empty() && ::getgrnam(config.socket.group.c_str()) == nullptr) {
    problems.push_back(fmt::format("socket.group: unknown group \"{}\"", config.socket.group));
  }
  // Start-up creates the state directory and its missing parents (mkdir -p): the path, or
  // its nearest existing ancestor, must be a directory.
  for (std::filesystem::path p = config.state_dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        problems.push_back(p == config.state_dir
                               ? fmt::format("stateDir: {} is not a directory", p.string())
                               : fmt::format("stateDir: cannot create {}: {} is not a directory",
                                             config.state_dir, p.string()));
      }
      break;
    }
    if ((errno != ENOENT && errno != ENOTDIR) || p == p.parent_path()) break;
  }
  // Opening the cgroup root only opens and reads (the version, the cpuset hierarchy); writes
  // start with the first reconcile. Start-up opens it even with `apply: false`.
  absl::StatusOr<std::unique_ptr<engine::CpusetEnforcer>> enforcer =
      engine::CpusetEnforcer::Open(config.cgroup, nullptr);
  if (!enforcer.ok()) {
    problems.push_back(fmt::format("cgroup.root: {}", enforcer.status().message()));
  }
  return problems;
}

}  // namespace

int CheckConfig(const std::string& config_path) {
  absl::StatusOr<config::Config> config = config::LoadConfigFile(config_path);
  if (!config.ok()) {
    std::cerr << "topologyd: configuration is invalid:\n" << config.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<topology::Topology> topology = topology::LoadTopology(SourceOf(*config));
  if (!topology.ok()) {
    std::cerr << "topologyd: " << config_path << ": topology: " << topology.status().message()
              << "\n";
    return 1;
  }
  // The policies themselves: option compatibility, reserved CPUs and memory, device pools.
  absl::StatusOr<admission::NodePolicy> policy = admission::BuildNodePolicy(*config, *topology);
  if (!policy.ok()) {
    std::cerr << "topologyd: configuration is invalid:\n"
              << config_path << ": " << policy.status().message() << "\n";
    return 1;
  }
  // What start-up would trip over on this host (the socket path's length is the loader's).
  if (std::vector<std::string> host = HostProblems(*config); !host.empty()) {
    std::cerr << "topologyd: configuration is invalid:\n";
    for (const std::string& problem : host) std::cerr << config_path << ": " << problem << "\n";
    return 1;
  }
  for (const std::string& warning : admission::NodePolicyWarnings(*policy)) {
    std::cerr << "topologyd: warning: " << config_path << ": " << warning << "\n";
  }
  std::cout << "topologyd: configuration " << config_path << " is valid\n";
  return 0;
}

int RunDaemon(const std::string& config_path) {
  // Step 1: configuration and logging.
  absl::StatusOr<config::Config> loaded = config::LoadConfigFile(config_path);
  if (!loaded.ok()) {
    std::cerr << "topologyd: cannot start: configuration is invalid:\n"
              << loaded.status().message() << "\n";
    return 1;
  }
  auto config = std::make_shared<const config::Config>(*std::move(loaded));
  if (absl::Status s = os::ConfigureLogging(config->log.level, config->log.format); !s.ok()) {
    std::cerr << "topologyd: " << s.message() << "\n";
    return 1;
  }
  spdlog::info("topologyd {} starting with {}", kVersion, config_path);

  // Step 2: the machine.
  absl::StatusOr<topology::Topology> topology = topology::LoadTopology(SourceOf(*config));
  if (!topology.ok()) {
    spdlog::critical("cannot start: topology: {}", topology.status().message());
    return 1;
  }
  auto machine = std::make_shared<const topology::Topology>(*std::move(topology));
  spdlog::info("topology: {} packages, {} NUMA nodes, {} cores, {} CPUs, {} PCI devices",
               machine->packages.size(), machine->numa_nodes.size(), machine->cores.size(),
               machine->cpus.size(), machine->pci_devices.size());

  // Step 3: the engine: node policy, restored allocations, cgroup enforcement. Held until exit.
  absl::StatusOr<state::StateDirLock> state_lock = state::StateDirLock::Acquire(config->state_dir);
  if (!state_lock.ok()) {
    spdlog::critical("cannot start: {}", state_lock.status().message());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<engine::CpusetEnforcer>> enforcer =
      engine::CpusetEnforcer::Open(config->cgroup, LogCgroupWrite);
  if (!enforcer.ok()) {
    spdlog::critical("cannot start: cgroup root {}: {}", config->cgroup.root,
                     enforcer.status().message());
    return 1;
  }
  state::PosixFileSystem fs;
  absl::StatusOr<std::unique_ptr<engine::Engine>> started = engine::Engine::Start(
      {.config = config,
       .topology = machine,
       .fs = &fs,
       .enforcer = *std::move(enforcer),
       .log = [](const std::string& line) { spdlog::info("{}", line); },
       .log_error = [](const std::string& line) { spdlog::error("{}", line); }});
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.status().message());
    return 1;
  }
  engine::Engine& engine = **started;
  engine::EngineStatus initial = engine.Status();
  spdlog::info("state: generation {}, {} pods restored from {}/state.json",
               initial.state_generation, initial.admitted_pods, config->state_dir);
  for (const std::string& warning : admission::NodePolicyWarnings(*engine.policy())) {
    spdlog::warn("{}", warning);
  }

  // Step 4: the gRPC server, fed by our own accept loop so every peer is identified.
  rpc::PeerRegistry peers;
  rpc::TopologydService service(&engine, &peers, ::getuid());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  grpc::ResourceQuota quota("topologyd");
  quota.SetMaxThreads(kMaxServerThreads);
  builder.SetResourceQuota(quota);
  // gRPC refuses a larger request (RESOURCE_EXHAUSTED) from its length, before parsing it.
  builder.SetMaxReceiveMessageSize(static_cast<int>(config->limits.request_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    spdlog::critical("cannot start: the gRPC server failed to start");
    return 1;
  }
  // Probes may ask for the whole server ("") or for our service by name; HealthReport
  // switches both.
  server->GetHealthCheckService()->SetServingStatus(::topologyd::v1::Topologyd::service_full_name(),
                                                    true);
  grpc::Server* raw_server = server.get();
  auto log_warn = [](const std::string& line) { spdlog::warn("{}", line); };
  auto log_info = [](const std::string& line) { spdlog::info("{}", line); };
  rpc::ConnectionGate gate(
      {.peers = &peers,
       .serve = [raw_server](int fd) { grpc::AddInsecureChannelFromFd(raw_server, fd); },
       .cap = [&engine] { return engine.config()->socket.max_connections_per_uid; },
       .warn = log_warn,
       .info = log_info});
  absl::StatusOr<std::unique_ptr<rpc::UdsListener>> listener = rpc::UdsListener::Create(
      {.path = config->SocketPath(), .mode = config->socket.mode, .group = config->socket.group});
  if (!listener.ok()) {
    spdlog::critical("cannot start: {}", listener.status().message());
    server->Shutdown();
    return 1;
  }
  (*listener)->Start({.on_connection = [&gate](int fd) { gate.Accept(fd); },
                      .open_connections = [&peers] { return peers.OpenConnections(); },
                      .warn = log_warn,
                      .info = log_info});

  engine.StartReconcileLoop();

  // Step 5: ready.
  os::SdNotifier notifier;
  std::optional<std::chrono::microseconds> watchdog = os::SdNotifier::WatchdogInterval();
  milliseconds wait = kIdleSignalWait;
  if (watchdog) {
    wait = std::min(wait, std::chrono::duration_cast<milliseconds>(*watchdog / 2));
  }
  HealthReport health(&notifier, [raw_server](bool serving) {
    raw_server->GetHealthCheckService()->SetServingStatus(serving);
  });
  notifier.Ready();
  spdlog::info("ready: listening on {}", config->SocketPath());

  // Step 6: serve signals until asked to stop; between them, publish the engine's health
  // (at least every `wait`, so a failing disk shows within a second), and close connections
  // refused for their uid's cap once they have had time to read why.
  while (true) {
    gate.ShutDownRefused();
    engine::EngineStatus current = engine.Status();
    health.Update(current.healthy, current.problem);
    std::optional<os::DaemonSignal> sig = os::WaitForSignal(wait);
    if (!sig) {
      // Only a healthy engine keeps systemd's watchdog fed; a wedged or failing one is
      // restarted by it.
      if (watchdog && engine.Healthy()) notifier.Watchdog();
      continue;
    }
    if (*sig == os::DaemonSignal::kTerminate) break;
    notifier.Reloading();
    spdlog::info("SIGHUP: reloading {}", config_path);
    engine::ReloadRecord record = engine.Reload(config::LoadConfigFile(config_path));
    LogReload(record, config_path);
    std::shared_ptr<const config::Config> now = engine.config();
    if (absl::Status s = os::ConfigureLogging(now->log.level, now->log.format); !s.ok()) {
      spdlog::error("reload: {}", s.message());
    }
    health.SetReloadNote(
        record.error.empty()
            ? (record.refused_keys.empty() ? "reload applied" : "reload refused restart-only keys")
            : "reload rejected, old configuration kept");
    notifier.Ready();
  }

  // Teardown, in reverse: no new connections, finish in-flight calls, stop.
  notifier.Stopping();
  spdlog::info("stopping");
  server->GetHealthCheckService()->Shutdown();
  (*listener)->Stop();
  // Drain: wait for the calls being handled to finish (bounded), then shut the server down
  // at once. Waiting inside Shutdown() instead would also wait out idle client connections.
  auto drain_until = std::chrono::steady_clock::now() + kShutdownGrace;
  while (service.InFlight() > 0 && std::chrono::steady_clock::now() < drain_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  engine.StopReconcileLoop();
  if (absl::Status s = engine.Flush(); !s.ok()) {
    spdlog::error("final checkpoint failed: {}", s.message());
    return 1;
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace topologyd::daemon
