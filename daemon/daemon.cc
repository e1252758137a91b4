#include "daemon/daemon.h"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "spdlog/spdlog.h"
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>

#include "daemon/health_report.h"
#include "lib/admission/node_policy.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/key_status.h"
#include "lib/common/version.h"
#include "lib/config/config_loader.h"
#include "lib/config/duration.h"
#include "lib/config/node_policy_config.h"
#include "lib/config/pod_resources_config.h"
#include "lib/engine/cpuset_enforcer.h"
#include "lib/engine/engine.h"
#include "lib/metrics/rpc_timer.h"
#include "lib/nrt/nrt_file_publisher.h"
#include "lib/nrt_api/kube_nrt_transport.h"
#include "lib/nrt_api/nrt_api_publisher.h"
#include "lib/os/logging.h"
#include "lib/os/notifier.h"
#include "lib/os/signals.h"
#include "lib/placement/placement_target.h"
#include "lib/rpc/connection_gate.h"
#include "lib/rpc/peer_credentials.h"
#include "lib/rpc/topologyd_service.h"
#include "lib/rpc/uds_listener.h"
#include "lib/state/dir_lock.h"
#include "lib/state/file_system.h"
#include "lib/topology/hwloc_source.h"

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
  if (config.pod_resources) {
    const std::string& group = config::PodResourcesSocket(config).group;
    if (!group.empty() && ::getgrnam(group.c_str()) == nullptr) {
      problems.push_back(
          fmt::format("{}.group: unknown group \"{}\"",
                      config.pod_resources->socket ? "podResources.socket" : "socket", group));
    }
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
  // Start-up makes the NRT file's directory the same way.
  if (!config.nrt.file.empty()) {
    if (std::string problem = nrt::NrtFileDirectoryProblem(config.nrt.file); !problem.empty()) {
      problems.push_back(problem);
    }
  }
  // Start-up reads the credentials once; the API server itself need not be reachable.
  if (config.nrt.api_server) {
    if (absl::StatusOr<kube_api::KubeApiClient> client =
            nrt_api::ClientFromConfig(*config.nrt.api_server);
        !client.ok()) {
      problems.push_back(std::string(client.status().message()));
    }
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

metrics::NrtPublishFigures PublishFigures(const nrt_api::NrtApiPublishStatus& status) {
  metrics::NrtPublishFigures f{
      .publishes = status.publishes,
      .failed_publishes = status.failed_publishes,
      .consecutive_failures = status.consecutive_failures,
      .last_delay_seconds = static_cast<double>(status.last_delay.count()) / 1e6};
  if (status.last_success_time) {
    f.last_success_unix_seconds =
        std::chrono::duration<double>(status.last_success_time->time_since_epoch()).count();
  }
  return f;
}

}  // namespace

int CheckConfig(const std::string& config_path) {
  // Everything the file says, and what the machine and the policies make of it, in one run:
  // the operator fixes the file once, not once per problem.
  std::optional<config::Config> config;
  std::optional<topology::Topology> topology;
  std::optional<admission::NodePolicy> policy;
  const absl::Status problems =
      config::CheckConfigFile(config_path, [&](const config::Config& read) -> absl::Status {
        absl::StatusOr<topology::Topology> machine = topology::LoadTopology(SourceOf(read));
        if (!machine.ok()) return KeyError("topology", machine.status());
        // The policies themselves: option compatibility, reserved CPUs and memory, devices.
        absl::StatusOr<admission::NodePolicy> built = config::BuildNodePolicy(read, *machine);
        if (!built.ok()) return built.status();
        config = read;
        topology = *std::move(machine);
        policy = *std::move(built);
        return absl::OkStatus();
      });
  if (!problems.ok()) {
    std::cerr << "topologyd: configuration is invalid:\n" << problems.message() << "\n";
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
  // Start-up does not need Placement, but every sync would fail like this (a token file not
  // written yet, say).
  if (config->placement) {
    absl::StatusOr<placement::SyncTarget> target =
        placement::SyncTargetFromConfig(*config, *topology);
    if (!target.ok()) {
      std::cerr << "topologyd: warning: " << config_path << ": " << target.status().message()
                << " (every Placement sync fails until this is fixed)\n";
    }
  }
  std::cout << "topologyd: configuration " << config_path << " is valid\n";
  return 0;
}

Daemon::Daemon(std::string config_path) : config_path_(std::move(config_path)) {}

Daemon::~Daemon() { (void)Unwind(); }

std::span<const Daemon::Step> Daemon::Steps() {
  static constexpr Step kSteps[] = {
      {"configuration", &Daemon::LoadConfiguration, nullptr},
      {"machine", &Daemon::LoadMachine, nullptr},
      // Held until the Daemon is destroyed, after everything that writes the directory.
      {"state directory lock", &Daemon::LockStateDir, nullptr},
      {"metrics", &Daemon::CreateMetrics, nullptr},
      {"engine", &Daemon::StartEngine, &Daemon::StopEngine},
      {"NRT file", &Daemon::StartNrtFile, &Daemon::StopNrtFile},
      {"NRT publisher", &Daemon::StartNrtApi, &Daemon::StopNrtApi},
      {"metrics endpoint", &Daemon::StartMetricsEndpoint, &Daemon::StopMetricsEndpoint},
      {"Placement sync", &Daemon::StartPlacementSync, &Daemon::StopPlacementSync},
      {"gRPC server", &Daemon::StartServer, &Daemon::StopServer},
      {"socket listener", &Daemon::StartListener, &Daemon::StopListener},
      {"PodResources server", &Daemon::StartPodResources, &Daemon::StopPodResources},
      {"ready", &Daemon::BecomeReady, &Daemon::StartStopping},
  };
  return kSteps;
}

int Daemon::Start() {
  for (const Step& step : Steps()) {
    // Each step logs its own failure, in the words an operator has always seen.
    if (absl::Status s = (this->*step.start)(); !s.ok()) {
      (void)Unwind();
      return 1;
    }
    ++completed_;
  }
  return 0;
}

absl::Status Daemon::Unwind() {
  absl::Status first;
  for (; completed_ > 0; --completed_) {
    const Step& step = Steps()[completed_ - 1];
    if (step.stop == nullptr) continue;
    if (absl::Status s = (this->*step.stop)(); !s.ok() && first.ok()) first = s;
  }
  return first;
}

int Daemon::Stop() {
  if (!Unwind().ok()) return 1;
  spdlog::info("stopped");
  return 0;
}

std::string Daemon::socket_path() const { return config_->SocketPath(); }

// Configuration and logging.
absl::Status Daemon::LoadConfiguration() {
  absl::StatusOr<config::Config> loaded = config::LoadConfigFile(config_path_);
  if (!loaded.ok()) {
    std::cerr << "topologyd: cannot start: configuration is invalid:\n"
              << loaded.status().message() << "\n";
    return loaded.status();
  }
  config_ = std::make_shared<const config::Config>(*std::move(loaded));
  if (absl::Status s = os::ConfigureLogging(config_->log.level, config_->log.format); !s.ok()) {
    std::cerr << "topologyd: " << s.message() << "\n";
    return s;
  }
  spdlog::info("topologyd {} starting with {}", kVersion, config_path_);
  return absl::OkStatus();
}

// The machine.
absl::Status Daemon::LoadMachine() {
  absl::StatusOr<topology::Topology> topology = topology::LoadTopology(SourceOf(*config_));
  if (!topology.ok()) {
    spdlog::critical("cannot start: topology: {}", topology.status().message());
    return topology.status();
  }
  machine_ = std::make_shared<const topology::Topology>(*std::move(topology));
  spdlog::info("topology: {} packages, {} NUMA nodes, {} cores, {} CPUs, {} PCI devices",
               machine_->packages.size(), machine_->numa_nodes.size(), machine_->cores.size(),
               machine_->cpus.size(), machine_->pci_devices.size());
  return absl::OkStatus();
}

// One daemon per state directory, for as long as it runs.
absl::Status Daemon::LockStateDir() {
  absl::StatusOr<state::StateDirLock> lock = state::StateDirLock::Acquire(config_->state_dir);
  if (!lock.ok()) {
    spdlog::critical("cannot start: {}", lock.status().message());
    return lock.status();
  }
  state_lock_.emplace(*std::move(lock));
  return absl::OkStatus();
}

// The engine: node policy, restored allocations, cgroup enforcement.
absl::Status Daemon::StartEngine() {
  absl::StatusOr<std::unique_ptr<engine::CpusetEnforcer>> enforcer =
      engine::CpusetEnforcer::Open(config_->cgroup, LogCgroupWrite);
  if (!enforcer.ok()) {
    spdlog::critical("cannot start: cgroup root {}: {}", config_->cgroup.root,
                     enforcer.status().message());
    return enforcer.status();
  }
  absl::StatusOr<std::unique_ptr<engine::Engine>> started = engine::Engine::Start(
      {.config = config_,
       .topology = machine_,
       .fs = &fs_,
       .enforcer = *std::move(enforcer),
       .log = [](const std::string& line) { spdlog::info("{}", line); },
       .log_warning = [](const std::string& line) { spdlog::warn("{}", line); },
       .log_error = [](const std::string& line) { spdlog::error("{}", line); },
       .events = metrics_.get()});
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.status().message());
    return started.status();
  }
  engine_ = *std::move(started);
  engine::EngineStatus initial = engine_->Status();
  spdlog::info("state: generation {}, {} pods restored from {}/state.json",
               initial.state_generation, initial.admitted_pods, config_->state_dir);
  for (const std::string& warning : admission::NodePolicyWarnings(*engine_->policy())) {
    spdlog::warn("{}", warning);
  }
  return absl::OkStatus();
}

// The metric families, when `metrics` is configured; the engine and the server report to them.
absl::Status Daemon::CreateMetrics() {
  if (!config_->metrics.listen.empty()) metrics_ = std::make_unique<metrics::Metrics>();
  return absl::OkStatus();
}

// /metrics over HTTP, reading the engine at each scrape.
absl::Status Daemon::StartMetricsEndpoint() {
  if (!metrics_) return absl::OkStatus();
  const engine::Engine* engine = engine_.get();
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables = {
      metrics_->registry(), std::make_shared<metrics::EngineCollector>([engine] {
        return std::make_optional(metrics::SnapshotOf(*engine));
      }),
      std::make_shared<metrics::BuildInfoCollector>()};
  // The publisher started before this endpoint and stops after it.
  if (const nrt_api::NrtApiPublisher* publisher = nrt_api_.get()) {
    collectables.push_back(std::make_shared<metrics::NrtPublishCollector>(
        [publisher] { return PublishFigures(publisher->Status()); }));
  }
  absl::StatusOr<std::unique_ptr<metrics::MetricsEndpoint>> endpoint =
      metrics::MetricsEndpoint::Start(config_->metrics.listen, std::move(collectables));
  if (!endpoint.ok()) {
    spdlog::critical("cannot start: {}", endpoint.status().message());
    return endpoint.status();
  }
  metrics_endpoint_ = *std::move(endpoint);
  spdlog::info("metrics: serving /metrics on {}", config_->metrics.listen);
  return absl::OkStatus();
}

// Before the engine stops: no scrape reads it after.
absl::Status Daemon::StopMetricsEndpoint() {
  metrics_endpoint_.reset();
  return absl::OkStatus();
}

// Runs once the server has drained: the reconcile loop (started with readiness) stops, and
// every change answered so far is made durable.
absl::Status Daemon::StopEngine() {
  engine_->StopReconcileLoop();
  if (absl::Status s = engine_->Flush(); !s.ok()) {
    spdlog::error("final checkpoint failed: {}", s.message());
    return s;
  }
  return absl::OkStatus();
}

// The NodeResourceTopology file (`nrt.file`), when configured: written now, then after every
// acknowledged change on its own thread.
absl::Status Daemon::StartNrtFile() {
  if (config_->nrt.file.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<nrt::NrtFilePublisher>> started = nrt::NrtFilePublisher::Start(
      {.path = config_->nrt.file,
       .engine = engine_.get(),
       .log_info = [](const std::string& line) { spdlog::info("{}", line); },
       .log_error = [](const std::string& line) { spdlog::error("{}", line); }});
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.status().message());
    return started.status();
  }
  nrt_file_ = *std::move(started);
  spdlog::info("NodeResourceTopology: keeping {} current", config_->nrt.file);
  return absl::OkStatus();
}

// After the server has drained: every change answered reaches the publisher (the engine hands
// a change over just after the write has answered its callers), the last one is written, then
// the thread ends. A checkpoint that cannot be written is StopEngine's to report.
absl::Status Daemon::StopNrtFile() {
  if (!nrt_file_) return absl::OkStatus();
  engine_->Flush().IgnoreError();
  nrt_file_->Stop();
  return absl::OkStatus();
}

// The NodeResourceTopology object in the API server (`nrt.apiServer`), when configured: applied
// at once, then after every acknowledged change and every resyncPeriod, on its own thread.
// Start-up waits for nothing but the credentials.
absl::Status Daemon::StartNrtApi() {
  if (!config_->nrt.api_server) return absl::OkStatus();
  const config::NrtApiServerConfig& api = *config_->nrt.api_server;
  absl::StatusOr<kube_api::KubeApiClient> client = nrt_api::ClientFromConfig(api);
  if (!client.ok()) {
    spdlog::critical("cannot start: {}", client.status().message());
    return client.status();
  }
  const std::string server = client->config().server;
  nrt_api_ = nrt_api::NrtApiPublisher::Start(
      {.engine = engine_.get(),
       .transport = std::make_unique<nrt_api::KubeNrtTransport>(*std::move(client)),
       .server = server,
       .resync_period = api.resync_period,
       .log_info = [](const std::string& line) { spdlog::info("{}", line); },
       .log_error = [](const std::string& line) { spdlog::error("{}", line); }});
  spdlog::info("NodeResourceTopology: publishing to {} (resync every {})", server,
               config::FormatDuration(api.resync_period));
  return absl::OkStatus();
}

// After the server has drained, as for the file: the last answered change is applied once.
absl::Status Daemon::StopNrtApi() {
  if (!nrt_api_) return absl::OkStatus();
  engine_->Flush().IgnoreError();
  nrt_api_->Stop();
  return absl::OkStatus();
}

// The OpenStack Placement tree (`placement`), when configured: synced on its own thread, at
// once, after reloads that change it and every syncPeriod. Start-up does not wait for it.
absl::Status Daemon::StartPlacementSync() {
  if (!config_->placement) return absl::OkStatus();
  engine::Engine* engine = engine_.get();
  placement_ = placement::PlacementSyncer::Start(
      {.target =
           [engine] {
             // Snapshots: the tree is built and sent with no engine lock held.
             return placement::SyncTargetFromConfig(*engine->config(), *engine->topology());
           },
       .period = [engine] { return engine->config()->placement->sync_period; },
       .log_info = [](const std::string& line) { spdlog::info("{}", line); },
       .log_error = [](const std::string& line) { spdlog::error("{}", line); }});
  spdlog::info("placement: publishing the node's provider tree to {} every {}",
               config_->placement->endpoint,
               config::FormatDuration(config_->placement->sync_period));
  return absl::OkStatus();
}

// After the server has drained: a call in progress is cancelled, the thread ends.
absl::Status Daemon::StopPlacementSync() {
  if (placement_) placement_->Stop();
  return absl::OkStatus();
}

// The gRPC server, without a port: our own accept loop feeds it.
absl::Status Daemon::StartServer() {
  service_ = std::make_unique<rpc::TopologydService>(engine_.get(), &peers_, ::getuid());
  if (placement_) {
    placement::PlacementSyncer* syncer = placement_.get();
    service_->SetPlacementStatusSource([syncer] { return syncer->Status(); });
  }
  if (nrt_api_) {
    nrt_api::NrtApiPublisher* publisher = nrt_api_.get();
    service_->SetNrtApiStatusSource([publisher] { return publisher->Status(); });
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  grpc::ResourceQuota quota("topologyd");
  quota.SetMaxThreads(kMaxServerThreads);
  builder.SetResourceQuota(quota);
  // gRPC refuses a larger request (RESOURCE_EXHAUSTED) from its length, before parsing it.
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_->limits.request_bytes));
  builder.RegisterService(service_.get());
  if (metrics_) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> timers;
    timers.push_back(std::make_unique<metrics::RpcTimerFactory>(metrics_.get()));
    builder.experimental().SetInterceptorCreators(std::move(timers));
  }
  server_ = builder.BuildAndStart();
  if (!server_) {
    spdlog::critical("cannot start: the gRPC server failed to start");
    return absl::InternalError("the gRPC server failed to start");
  }
  // Probes may ask for the whole server ("") or for our service by name; HealthReport
  // switches both.
  server_->GetHealthCheckService()->SetServingStatus(
      ::topologyd::v1::Topologyd::service_full_name(), true);
  return absl::OkStatus();
}

// Drain: end the WatchAllocations streams, wait for the calls being handled to finish
// (bounded), then shut the server down at once. Waiting inside Shutdown() instead would also
// wait out idle client connections.
absl::Status Daemon::StopServer() {
  service_->EndWatches("topologyd is shutting down; watch again once it is back");
  auto drain_until = std::chrono::steady_clock::now() + kShutdownGrace;
  while (service_->InFlight() > 0 && std::chrono::steady_clock::now() < drain_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  return absl::OkStatus();
}

// The Unix socket and the accept loop, which identifies every peer before gRPC sees it.
absl::Status Daemon::StartListener() {
  grpc::Server* raw_server = server_.get();
  engine::Engine* engine = engine_.get();
  auto log_warn = [](const std::string& line) { spdlog::warn("{}", line); };
  auto log_info = [](const std::string& line) { spdlog::info("{}", line); };
  gate_ = std::make_unique<rpc::ConnectionGate>(rpc::ConnectionGateOptions{
      .peers = &peers_,
      .serve = [raw_server](int fd) { grpc::AddInsecureChannelFromFd(raw_server, fd); },
      .cap = [engine] { return engine->config()->socket.max_connections_per_uid; },
      .warn = log_warn,
      .info = log_info});
  absl::StatusOr<std::unique_ptr<rpc::UdsListener>> listener =
      rpc::UdsListener::Create({.path = config_->SocketPath(),
                                .mode = config_->socket.mode,
                                .group = config_->socket.group});
  if (!listener.ok()) {
    spdlog::critical("cannot start: {}", listener.status().message());
    return listener.status();
  }
  listener_ = *std::move(listener);
  rpc::ConnectionGate* gate = gate_.get();
  rpc::PeerRegistry* peers = &peers_;
  listener_->Start({.on_connection = [gate](int fd) { gate->Accept(fd); },
                    .open_connections = [peers] { return peers->OpenConnections(); },
                    .warn = log_warn,
                    .info = log_info});
  return absl::OkStatus();
}

absl::Status Daemon::StopListener() {
  listener_->Stop();
  return absl::OkStatus();
}

// The kubelet's PodResources API on its own socket, when configured.
absl::Status Daemon::StartPodResources() {
  if (!config_->pod_resources) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<podresources::PodResourcesServer>> started =
      podresources::PodResourcesServer::Start(
          {.engine = engine_.get(),
           .daemon_uid = ::getuid(),
           .warn = [](const std::string& line) { spdlog::warn("{}", line); },
           .info = [](const std::string& line) { spdlog::info("{}", line); }});
  if (!started.ok()) {
    spdlog::critical("cannot start: podResources: {}", started.status().message());
    return started.status();
  }
  pod_resources_ = *std::move(started);
  spdlog::info("PodResources API: listening on {}", config_->pod_resources->SocketPath());
  return absl::OkStatus();
}

absl::Status Daemon::StopPodResources() {
  if (pod_resources_) pod_resources_->Stop();
  return absl::OkStatus();
}

// Ready: reconcile, publish health, tell systemd.
absl::Status Daemon::BecomeReady() {
  engine_->StartReconcileLoop();
  watchdog_ = os::SdNotifier::WatchdogInterval();
  wait_ = kIdleSignalWait;
  if (watchdog_) {
    wait_ = std::min(wait_, std::chrono::duration_cast<milliseconds>(*watchdog_ / 2));
  }
  grpc::Server* raw_server = server_.get();
  health_ = std::make_unique<HealthReport>(&notifier_, [raw_server](bool serving) {
    raw_server->GetHealthCheckService()->SetServingStatus(serving);
  });
  notifier_.Ready();
  spdlog::info("ready: listening on {}", config_->SocketPath());
  return absl::OkStatus();
}

// The first teardown: tell systemd and the health probes, before connections close.
absl::Status Daemon::StartStopping() {
  notifier_.Stopping();
  spdlog::info("stopping");
  server_->GetHealthCheckService()->Shutdown();
  return absl::OkStatus();
}

// Serves signals until asked to stop; between them, publishes the engine's health (at least
// every `wait_`, so a failing disk shows within a second), and closes connections refused
// for their uid's cap once they have had time to read why.
void Daemon::Serve() {
  while (true) {
    gate_->ShutDownRefused();
    if (pod_resources_) pod_resources_->ShutDownRefused();
    engine::EngineStatus current = engine_->Status();
    health_->Update(current.healthy, current.problem);
    std::optional<os::DaemonSignal> sig = os::WaitForSignal(wait_);
    if (!sig) {
      // Only a healthy engine keeps systemd's watchdog fed; a wedged or failing one is
      // restarted by it.
      if (watchdog_ && engine_->Healthy()) notifier_.Watchdog();
      continue;
    }
    if (*sig == os::DaemonSignal::kTerminate) return;
    Reload();
  }
}

void Daemon::Reload() {
  notifier_.Reloading();
  spdlog::info("SIGHUP: reloading {}", config_path_);
  engine::ReloadRecord record = engine_->Reload(config::LoadConfigFile(config_path_));
  LogReload(record, config_path_);
  // Device pools and nrt.nodeName reload live; the object shows them.
  if (nrt_file_) nrt_file_->Refresh();
  if (nrt_api_) nrt_api_->Refresh();
  // The placement keys and device pools reload live; the syncer publishes a changed tree.
  if (placement_) placement_->Refresh();
  std::shared_ptr<const config::Config> now = engine_->config();
  if (absl::Status s = os::ConfigureLogging(now->log.level, now->log.format); !s.ok()) {
    spdlog::error("reload: {}", s.message());
  }
  health_->SetReloadNote(
      record.error.empty()
          ? (record.refused_keys.empty() ? "reload applied" : "reload refused restart-only keys")
          : "reload rejected, old configuration kept");
  notifier_.Ready();
}

int RunDaemon(const std::string& config_path) {
  Daemon daemon(config_path);
  if (int code = daemon.Start(); code != 0) return code;
  daemon.Serve();
  return daemon.Stop();
}

}  // namespace topologyd::daemon
