// RuntimeResync: the runtime's view against topologyd's, after a shim restart and
// periodically. Sandboxes and containers go into the book; running containers are bound in
// topologyd; pods topologyd holds without a sandbox (twice in a row) are released; running
// containers topologyd does not hold (created while it was unreachable under failurePolicy
// Ignore) are admitted and pinned; changed placements are pushed.
//
// Run() is called from one thread at a time (the follower's resync thread).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "cri/v1/runtime.grpc.pb.h"
#include "shim/allocation_cache.h"
#include "shim/container_placer.h"
#include "shim/placement_pusher.h"
#include "shim/runtime_book.h"
#include "shim/shim_config.h"
#include "shim/topologyd_client.h"

namespace topologyd::shim {

class RuntimeResync {
 public:
  RuntimeResync(const ShimConfig& config, runtime::v1::RuntimeService::StubInterface* runtime,
                TopologydClient* topologyd, AllocationCache* cache, RuntimeBook* book,
                ContainerPlacer* placer, PlacementPusher* pusher)
      : config_(config),
        runtime_(runtime),
        topologyd_(topologyd),
        cache_(cache),
        book_(book),
        placer_(placer),
        pusher_(pusher) {}

  absl::Status Run();

 private:
  // The runtime's sandboxes into the book; the pods with a live sandbox returned.
  absl::StatusOr<std::set<std::string>> ReadSandboxes();
  // The runtime's containers into the book; the running ones returned.
  absl::StatusOr<std::vector<ContainerRecord>> ReadContainers();
  // A running container topologyd does not hold: admitted, pinned and bound.
  void Adopt(const ContainerRecord& container);
  void ReleaseOrphans(const v1::ListAllocationsResponse& held,
                      const std::set<std::string>& live_pods);
  // What the runtime stored of a container's resources; nullopt when it does not answer.
  std::optional<runtime::v1::LinuxContainerResources> StoredResources(
      const std::string& container_id);
  std::chrono::system_clock::time_point RuntimeDeadline() const;

  const ShimConfig config_;
  runtime::v1::RuntimeService::StubInterface* const runtime_;
  TopologydClient* const topologyd_;
  AllocationCache* const cache_;
  RuntimeBook* const book_;
  ContainerPlacer* const placer_;
  PlacementPusher* const pusher_;
  // Pods found without a sandbox at the last resync.
  std::map<std::string, int> orphan_sightings_;
};

}  // namespace topologyd::shim
