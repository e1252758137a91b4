// The PlanContainer request the shim sends for a container kubelet creates (or, without one,
// for a sandbox): the sandbox from the shim's book, the pod's other containers with the CRI
// resources they were created with, the container's own, and the pod's spec when the shim's
// apiServer source found it. The same pod as planner::RuntimePod, for deciding the failure policy
// while topologyd cannot answer.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/planner/container_plan.h"
#include "lib/pod/pod.h"
#include "lib/shim/pod_book.h"
#include "topologyd/v1/topologyd.pb.h"

#include "cri/v1/runtime.pb.h"
#include "shim/shim_config.h"

namespace topologyd::shim {

using KnownResources = std::vector<std::pair<std::string, podspec::CriResources>>;

podspec::CriResources ToCriResources(const runtime::v1::LinuxContainerResources& resources);

// The configured sources topologyd tries itself (apiServer is the shim's own), the estimate
// last when not listed.
std::vector<planner::SpecSource> DaemonSpecSources(const ShimConfig& config);

v1::PlanContainerRequest PlanRequest(const SandboxRecord& sandbox, const KnownResources& known,
                                     const std::optional<planner::RuntimeContainer>& container,
                                     const std::optional<pod::Pod>& api_spec,
                                     const std::vector<planner::SpecSource>& sources,
                                     bool answer_when_decided);

planner::RuntimePod RuntimePodOf(const SandboxRecord& sandbox, const KnownResources& known);

}  // namespace topologyd::shim
