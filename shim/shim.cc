#include "shim/shim.h"

#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/version.h"
#include "lib/os/logging.h"
#include "lib/os/notifier.h"
#include "lib/os/signals.h"

#include "shim/cri_unary_methods.h"

namespace topologyd::shim {
namespace {

// Threads for intercepted calls: kubelet starts a pod's containers one after the other, but
// several pods at once; each call mostly waits on topologyd or the runtime.
constexpr int kWorkerThreads = 4;

}  // namespace

Shim::Shim(ShimConfig config, std::string config_path)
    : config_(std::move(config)), config_path_(std::move(config_path)) {}

Shim::~Shim() { Stop(); }

absl::Status Shim::Start() {
  topologyd_ =
      std::make_unique<GrpcTopologydClient>(config_.topologyd_socket, config_.topologyd_timeout);
  std::optional<kube_api::KubeApiClient> api;
  if (std::find(config_.pod_spec.sources.begin(), config_.pod_spec.sources.end(),
                PodSpecSource::kApiServer) != config_.pod_spec.sources.end()) {
    const absl::Duration timeout = absl::FromChrono(config_.pod_spec.api_server_timeout);
    absl::StatusOr<kube_api::KubeApiClient> client =
        config_.pod_spec.kubeconfig == "in-cluster"
            ? kube_api::KubeApiClient::InCluster({}, timeout)
            : kube_api::KubeApiClient::FromKubeconfig(config_.pod_spec.kubeconfig, timeout);
    if (!client.ok()) {
      return absl::FailedPreconditionError(
          fmt::format("podSpec.kubeconfig: {}", client.status().message()));
    }
    api = std::move(*client);
  }
  specs_ = std::make_unique<PodSpecResolver>(config_, std::move(api));
  absl::StatusOr<std::unique_ptr<PodCgroupQuota>> pod_quota =
      PodCgroupQuota::Open(config_.cgroup_root, config_.cgroup_version);
  if (!pod_quota.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("cgroup.root: {} (the shim lifts the CFS quota of the pod cgroups of pods "
                    "with exclusive CPUs there)",
                    pod_quota.status().message()));
  }
  pod_quota_ = std::move(*pod_quota);

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(config_.max_message_bytes);
  args.SetMaxSendMessageSize(config_.max_message_bytes);
  // A runtime restart is retried within a second. (Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC
  // takes the connect timeout from it, and a short one fails handshakes with a busy runtime.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  runtime_channel_ =
      grpc::CreateCustomChannel(config_.runtime_endpoint, grpc::InsecureChannelCredentials(), args);
  runtime_ = runtime::v1::RuntimeService::NewStub(runtime_channel_);
  placer_ = std::make_unique<ContainerPlacer>(config_, topologyd_.get(), specs_.get(), &cache_,
                                              &book_, pod_quota_.get());
  pusher_ =
      std::make_unique<PlacementPusher>(config_.topologyd_timeout, runtime_.get(), &cache_, &book_);
  resync_ = std::make_unique<RuntimeResync>(config_, runtime_.get(), topologyd_.get(), &cache_,
                                            &book_, placer_.get(), pusher_.get());
  handlers_ = std::make_unique<CriHandlers>(placer_.get(), &book_, &cache_, specs_.get(),
                                            runtime_.get(), config_.topologyd_timeout);
  workers_ = std::make_unique<WorkQueue>(kWorkerThreads);
  interceptor_ = std::make_unique<RelayInterceptor>(handlers_.get(), workers_.get());

  cri_relay::RelayOptions options;
  options.listen_path = config_.ListenPath();
  options.upstream_target = config_.runtime_endpoint;
  options.max_message_bytes = config_.max_message_bytes;
  options.socket_mode = config_.socket_mode;
  options.unary_methods = CriUnaryMethods();
  absl::StatusOr<std::unique_ptr<cri_relay::Relay>> relay =
      cri_relay::Relay::Start(options, interceptor_.get());
  if (!relay.ok()) return relay.status();
  relay_ = std::move(*relay);

  follower_ = std::make_unique<Follower>(topologyd_.get(), &cache_, resync_.get(), pusher_.get(),
                                         config_.resync.period);
  follower_->Start();
  std::vector<std::string_view> sources;
  for (PodSpecSource s : config_.pod_spec.sources) sources.push_back(ToString(s));
  spdlog::info(
      "topologyd-shim {} relaying {} to {}; topologyd at {}; pod specs from {}; pod cgroup quotas "
      "in {} ({})",
      kVersion, config_.listen, config_.runtime_endpoint, config_.topologyd_socket,
      fmt::join(sources, ", "), pod_quota_->path(), cgroup::ToString(pod_quota_->version()));
  return absl::OkStatus();
}

void Shim::Serve() {
  os::SdNotifier notifier;
  notifier.Ready();
  while (true) {
    std::optional<os::DaemonSignal> signal = os::WaitForSignal(std::chrono::seconds(1));
    if (!signal) continue;
    if (*signal == os::DaemonSignal::kTerminate) break;
    // SIGHUP: the log settings apply at once; every other key needs a restart.
    absl::StatusOr<ShimConfig> next = LoadShimConfigFile(config_path_);
    if (!next.ok()) {
      spdlog::error("reload: {} (keeping the running configuration)", next.status().message());
      continue;
    }
    if (absl::Status logging = os::ConfigureLogging(next->log.level, next->log.format);
        !logging.ok()) {
      spdlog::error("reload: {}", logging.message());
      continue;
    }
    spdlog::info("reload: log settings applied; other keys take effect at the next start");
  }
  notifier.Stopping();
}

void Shim::Stop() {
  // Calls in flight get a moment to finish; the follower and workers stop after the relay,
  // which waits for every interceptor call it started.
  if (relay_) relay_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (follower_) follower_->Stop();
  if (workers_) workers_->Stop();
  relay_.reset();
}

int RunShim(const std::string& config_path, const ShimConfig& config) {
  if (absl::Status logging = os::ConfigureLogging(config.log.level, config.log.format);
      !logging.ok()) {
    spdlog::error("{}", logging.message());
    return 1;
  }
  Shim shim(config, config_path);
  if (absl::Status started = shim.Start(); !started.ok()) {
    spdlog::error("topologyd-shim cannot start: {}", started.message());
    shim.Stop();
    return 1;
  }
  shim.Serve();
  shim.Stop();
  spdlog::info("topologyd-shim stopped");
  return 0;
}

}  // namespace topologyd::shim
