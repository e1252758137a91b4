// TopologydClient: the calls the shim's handlers make to topologyd. GrpcTopologydClient makes
// them over topologyd's socket; tests give the handlers a fake.
//
// Implementations are thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::shim {

class TopologydClient {
 public:
  using Deadline = std::chrono::system_clock::time_point;

  virtual ~TopologydClient() = default;

  // topologyd's plan for a container about to be created (its PlanContainer). With
  // request.answer_when_decided, the admission may come before it is on disk
  // (AdmitResponse.not_yet_durable): then nothing may be acknowledged before AwaitDurableAsync
  // says it is.
  virtual absl::StatusOr<v1::PlanContainerResponse> PlanContainer(
      const v1::PlanContainerRequest& request, std::optional<Deadline> deadline) = 0;
  // Calls `done` once topologyd says everything up to the admission's state generation is on
  // disk, or with why not; on another thread, or on this one when the call cannot start. It
  // touches nothing of the client, so it may come after the client is gone.
  virtual void AwaitDurableAsync(const v1::AdmitResponse& admitted,
                                 std::optional<Deadline> deadline,
                                 std::function<void(absl::Status)> done) = 0;
  virtual absl::StatusOr<v1::AllocateResponse> Allocate(const std::string& pod_uid,
                                                        const std::string& container,
                                                        const std::string& container_id,
                                                        const std::string& cgroup) = 0;
  // Releases the pod, or one container of it only while it is bound to `container_id` (when
  // not empty).
  virtual absl::Status Release(const std::string& pod_uid, const std::string& container,
                               const std::string& container_id) = 0;
  virtual absl::StatusOr<v1::ListAllocationsResponse> ListAllocations() = 0;
};

}  // namespace topologyd::shim
