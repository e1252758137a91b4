// The shim's life: start-up (configuration, clients, the relay on kubelet's socket, the
// follower), the signal loop (SIGTERM/SIGINT stop, SIGHUP re-reads the log settings) and an
// orderly stop. Tests run Start() and Stop() in process.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"

#include "lib/cri_relay/relay.h"

#include "shim/allocation_cache.h"
#include "shim/container_placer.h"
#include "shim/cri_handlers.h"
#include "shim/follower.h"
#include "shim/grpc_topologyd_client.h"
#include "shim/placement_pusher.h"
#include "shim/pod_cgroup_quota.h"
#include "shim/pod_spec_resolver.h"
#include "shim/relay_interceptor.h"
#include "shim/runtime_book.h"
#include "shim/runtime_resync.h"
#include "shim/shim_config.h"
#include "shim/work_queue.h"

namespace topologyd::shim {

class Shim {
 public:
  Shim(ShimConfig config, std::string config_path);
  ~Shim();

  absl::Status Start();
  // Until SIGTERM or SIGINT (blocked in every thread by then).
  void Serve();
  void Stop();

 private:
  ShimConfig config_;
  const std::string config_path_;
  std::unique_ptr<GrpcTopologydClient> topologyd_;
  std::unique_ptr<PodSpecResolver> specs_;
  AllocationCache cache_;
  RuntimeBook book_;
  std::unique_ptr<PodCgroupQuota> pod_quota_;
  std::shared_ptr<grpc::Channel> runtime_channel_;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<ContainerPlacer> placer_;
  std::unique_ptr<PlacementPusher> pusher_;
  std::unique_ptr<RuntimeResync> resync_;
  std::unique_ptr<CriHandlers> handlers_;
  std::unique_ptr<WorkQueue> workers_;
  std::unique_ptr<RelayInterceptor> interceptor_;
  std::unique_ptr<cri_relay::Relay> relay_;
  std::unique_ptr<Follower> follower_;
};

// main(): runs the shim on the configuration file; the process exit code.
int RunShim(const std::string& config_path, const ShimConfig& overrides_applied);

}  // namespace topologyd::shim
