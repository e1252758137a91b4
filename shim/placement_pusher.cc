#include "shim/placement_pusher.h"

#include "spdlog/spdlog.h"

#include "shim/placement_resources.h"

namespace topologyd::shim {

bool PlacementPusher::Send(const std::string& container_id, const Placement& placement) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout_);
  runtime::v1::UpdateContainerResourcesRequest update;
  update.set_container_id(container_id);
  ApplyPlacement(placement, update.mutable_linux());
  runtime::v1::UpdateContainerResourcesResponse reply;
  grpc::Status status = runtime_->UpdateContainerResources(&context, update, &reply);
  if (!status.ok()) {
    spdlog::warn("the runtime did not take cpuset {} for container {}: {}", placement.cpus,
                 container_id, status.error_message());
    return false;
  }
  spdlog::info("container {} now on CPUs {}", container_id, placement.cpus);
  return true;
}

bool PlacementPusher::Push(const std::string& container_id, const Placement& placement) {
  const bool taken = Send(container_id, placement);
  if (taken) book_->RecordGiven(container_id, placement);
  return taken;
}

void PlacementPusher::PushChanged() {
  for (const auto& [id, placement] : book_->PushesDue(cache_->Bound())) {
    book_->RecordPush(id, placement, Send(id, placement));
  }
}

}  // namespace topologyd::shim
