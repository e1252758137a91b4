#include "lib/podresources/pod_resources_server.h"

#include <chrono>

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>

#include "lib/config/pod_resources_config.h"

namespace topologyd::podresources {
namespace {

// Calls answer at once on gRPC's callback threads; a few threads serve anything synchronous
// (health, reflection).
constexpr int kMaxServerThreads = 4;
// The requests are empty or two names.
constexpr int kMaxRequestBytes = 64 * 1024;
// Stop() lets calls in progress finish for at most this long.
constexpr std::chrono::milliseconds kShutdownGrace{1000};

}  // namespace

absl::StatusOr<std::unique_ptr<PodResourcesServer>> PodResourcesServer::Start(
    PodResourcesServerOptions options) {
  engine::Engine* engine = options.engine;
  const std::shared_ptr<const config::Config> config = engine->config();
  const config::SocketConfig& socket = config::PodResourcesSocket(*config);
  std::unique_ptr<PodResourcesServer> self(new PodResourcesServer());

  self->service_ = std::make_unique<PodResourcesService>(engine, &self->peers_, options.daemon_uid);
  grpc::ServerBuilder builder;
  grpc::ResourceQuota quota("topologyd-podresources");
  quota.SetMaxThreads(kMaxServerThreads);
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  builder.RegisterService(self->service_.get());
  self->server_ = builder.BuildAndStart();
  if (!self->server_) return absl::InternalError("the PodResources gRPC server failed to start");

  grpc::Server* raw_server = self->server_.get();
  // The cap reloads; which key sets it is fixed while the daemon runs (podResources.socket
  // coming or going needs a restart).
  const bool own_socket = config->pod_resources->socket.has_value();
  self->gate_ = std::make_unique<rpc::ConnectionGate>(rpc::ConnectionGateOptions{
      .peers = &self->peers_,
      .serve = [raw_server](int fd) { grpc::AddInsecureChannelFromFd(raw_server, fd); },
      .cap =
          [engine] {
            return config::PodResourcesSocket(*engine->config()).max_connections_per_uid;
          },
      .cap_key =
          own_socket ? "podResources.socket.maxConnectionsPerUid" : "socket.maxConnectionsPerUid",
      .warn = options.warn,
      .info = options.info});
  absl::StatusOr<std::unique_ptr<rpc::UdsListener>> listener = rpc::UdsListener::Create(
      {.path = config->pod_resources->SocketPath(), .mode = socket.mode, .group = socket.group});
  if (!listener.ok()) {
    self->server_->Shutdown(std::chrono::system_clock::now());
    self->server_->Wait();
    self->stopped_ = true;
    return listener.status();
  }
  self->listener_ = *std::move(listener);
  rpc::ConnectionGate* gate = self->gate_.get();
  rpc::PeerRegistry* peers = &self->peers_;
  self->listener_->Start({.on_connection = [gate](int fd) { gate->Accept(fd); },
                          .open_connections = [peers] { return peers->OpenConnections(); },
                          .warn = options.warn,
                          .info = options.info});
  return self;
}

PodResourcesServer::~PodResourcesServer() { Stop(); }

void PodResourcesServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  listener_->Stop();
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server_->Wait();
}

void PodResourcesServer::ShutDownRefused() { gate_->ShutDownRefused(); }

}  // namespace topologyd::podresources
