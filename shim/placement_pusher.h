// PlacementPusher: gives the runtime each bound container's placement when it differs from
// what the runtime was last given (the shared pool changed, or a container was adopted).
// containerd re-applies its stored cpuset on every update, so a cgroup write by topologyd
// alone would not last.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "cri/v1/runtime.grpc.pb.h"
#include "shim/allocation_cache.h"
#include "shim/runtime_book.h"

namespace topologyd::shim {

class PlacementPusher {
 public:
  PlacementPusher(std::chrono::milliseconds timeout,
                  runtime::v1::RuntimeService::StubInterface* runtime, AllocationCache* cache,
                  RuntimeBook* book)
      : timeout_(timeout), runtime_(runtime), cache_(cache), book_(book) {}

  // Sends the runtime the container's placement; true when it took it (and recorded so).
  bool Push(const std::string& container_id, const Placement& placement);
  // Pushes every bound container whose placement changed.
  void PushChanged();

 private:
  bool Send(const std::string& container_id, const Placement& placement);

  const std::chrono::milliseconds timeout_;
  runtime::v1::RuntimeService::StubInterface* const runtime_;
  AllocationCache* const cache_;
  RuntimeBook* const book_;
};

}  // namespace topologyd::shim
