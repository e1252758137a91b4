#include "lib/rpc/plan_container_proto.h"

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/pod/validate.h"
#include "lib/rpc/pod_proto.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;

podspec::CriResources ResourcesFromProto(const v1::LinuxResources& in) {
  podspec::CriResources out;
  out.cpu_period = in.cpu_period();
  out.cpu_quota = in.cpu_quota();
  out.cpu_shares = in.cpu_shares();
  out.memory_limit_in_bytes = in.memory_limit_in_bytes();
  out.oom_score_adj = in.oom_score_adj();
  for (const v1::HugepageLimit& h : in.hugepage_limits()) {
    out.hugepage_limits.push_back({h.page_size(), h.limit()});
  }
  return out;
}

absl::StatusOr<planner::RuntimeContainer> ContainerFromProto(const v1::RuntimeContainer& in,
                                                             std::string_view field) {
  if (absl::Status name = pod::ValidateContainerName(in.name()); !name.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}.name: {}", field, name.message()));
  }
  return planner::RuntimeContainer{in.name(), ResourcesFromProto(in.resources())};
}

}  // namespace

absl::StatusOr<PlanInput> PlanInputFromProto(const v1::PlanContainerRequest& in,
                                             size_t max_containers) {
  if (!in.has_pod()) return absl::InvalidArgumentError("pod: required");
  PlanInput out;
  const v1::RuntimePod& pod = in.pod();
  if (static_cast<size_t>(pod.containers_size()) > max_containers) {
    return absl::InvalidArgumentError(fmt::format(
        "pod.containers: {} containers, more than the {} allowed (limits.containersPerPod)",
        pod.containers_size(), max_containers));
  }
  // What ends up in messages and the state is checked first, as PodFromProto checks it.
  for (const auto& [field, status] :
       {std::pair{"pod.uid", pod::ValidatePodUid(pod.uid())},
        std::pair{"pod.namespace", pod::ValidateNamespace(pod.namespace_())},
        std::pair{"pod.name", pod::ValidatePodName(pod.name())}}) {
    if (!status.ok())
      return absl::InvalidArgumentError(fmt::format("{}: {}", field, status.message()));
  }
  out.pod.uid = pod.uid();
  out.pod.namespace_name = pod.namespace_();
  out.pod.name = pod.name();
  out.pod.annotations.insert(pod.annotations().begin(), pod.annotations().end());
  out.pod.cgroup_parent = pod.cgroup_parent();
  for (int i = 0; i < pod.containers_size(); ++i) {
    TOPOLOGYD_ASSIGN_OR_RETURN(
        planner::RuntimeContainer c,
        ContainerFromProto(pod.containers(i), fmt::format("pod.containers[{}]", i)));
    out.pod.containers.push_back(std::move(c));
  }
  if (in.has_container()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(out.container, ContainerFromProto(in.container(), "container"));
  }
  if (in.has_pod_spec()) {
    absl::StatusOr<pod::Pod> given = PodFromProto(in.pod_spec(), max_containers);
    if (!given.ok()) {
      return absl::InvalidArgumentError(fmt::format("pod_spec: {}", given.status().message()));
    }
    if (given->uid != pod.uid()) {
      return absl::InvalidArgumentError(fmt::format("pod_spec.uid: {} is not the pod's uid {}",
                                                    QuoteForMessage(given->uid),
                                                    QuoteForMessage(pod.uid())));
    }
    out.given = std::move(*given);
  }
  if (!in.has_spec_sources()) {
    out.sources = planner::kDefaultSpecSources;
    return out;
  }
  const auto& words = in.spec_sources().sources();
  for (int i = 0; i < words.size(); ++i) {
    std::optional<planner::SpecSource> source = planner::ParseSpecSource(words[i]);
    if (!source) {
      return absl::InvalidArgumentError(
          fmt::format("spec_sources.sources[{}]: {} is not \"annotation\" or \"estimate\"", i,
                      QuoteForMessage(words[i])));
    }
    out.sources.push_back(*source);
  }
  return out;
}

absl::StatusOr<pod::Pod> CheckPlannedPod(const planner::ResolvedSpec& spec, size_t max_containers) {
  v1::Pod proto;
  PodToProto(spec.pod, &proto);
  absl::StatusOr<pod::Pod> checked = PodFromProto(proto, max_containers);
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("the pod's spec from its {}: {}", spec.source, checked.status().message()));
  }
  return checked;
}

}  // namespace topologyd::rpc
