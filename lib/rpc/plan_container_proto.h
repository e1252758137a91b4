// The PlanContainer request in domain terms: the pod as the runtime shows it
// (planner::RuntimePod), the container being created, the caller's own spec and the spec
// sources, checked as the daemon's gate checks every request (INVALID_ARGUMENT naming the
// field). The planned pod is checked again by PodFromProto's rules before it is admitted, so
// an estimate or an annotation cannot bring in what an Admit could not.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/planner/container_plan.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::rpc {

struct PlanInput {
  planner::RuntimePod pod;
  std::optional<planner::RuntimeContainer> container;  // nullopt: the pod's sandbox
  std::optional<pod::Pod> given;
  std::vector<planner::SpecSource> sources;
};

absl::StatusOr<PlanInput> PlanInputFromProto(const topologyd::v1::PlanContainerRequest& in,
                                             size_t max_containers);

// `spec` as Admit would take it (PodFromProto's checks), the errors prefixed with where the
// spec came from.
absl::StatusOr<pod::Pod> CheckPlannedPod(const planner::ResolvedSpec& spec, size_t max_containers);

}  // namespace topologyd::rpc
