#include "shim/plan_request.h"

#include <algorithm>

#include "lib/rpc/pod_proto.h"

namespace topologyd::shim {
namespace {

void ResourcesToProto(const podspec::CriResources& in, v1::LinuxResources* out) {
  out->set_cpu_period(in.cpu_period);
  out->set_cpu_quota(in.cpu_quota);
  out->set_cpu_shares(in.cpu_shares);
  out->set_memory_limit_in_bytes(in.memory_limit_in_bytes);
  out->set_oom_score_adj(in.oom_score_adj);
  for (const podspec::HugepageLimit& h : in.hugepage_limits) {
    v1::HugepageLimit* limit = out->add_hugepage_limits();
    limit->set_page_size(h.page_size);
    limit->set_limit(h.limit);
  }
}

}  // namespace

podspec::CriResources ToCriResources(const runtime::v1::LinuxContainerResources& r) {
  podspec::CriResources out;
  out.cpu_period = r.cpu_period();
  out.cpu_quota = r.cpu_quota();
  out.cpu_shares = r.cpu_shares();
  out.memory_limit_in_bytes = r.memory_limit_in_bytes();
  out.oom_score_adj = r.oom_score_adj();
  out.cpuset_cpus = r.cpuset_cpus();
  out.cpuset_mems = r.cpuset_mems();
  for (const runtime::v1::HugepageLimit& h : r.hugepage_limits()) {
    out.hugepage_limits.push_back({h.page_size(), h.limit()});
  }
  return out;
}

std::vector<planner::SpecSource> DaemonSpecSources(const ShimConfig& config) {
  std::vector<planner::SpecSource> sources;
  for (PodSpecSource source : config.pod_spec.sources) {
    if (source == PodSpecSource::kAnnotation) sources.push_back(planner::SpecSource::kAnnotation);
    if (source == PodSpecSource::kEstimate) sources.push_back(planner::SpecSource::kEstimate);
  }
  // The estimate is the shim's last resort whether listed or not (docs/shim.md).
  if (std::find(sources.begin(), sources.end(), planner::SpecSource::kEstimate) == sources.end()) {
    sources.push_back(planner::SpecSource::kEstimate);
  }
  return sources;
}

v1::PlanContainerRequest PlanRequest(const SandboxRecord& sandbox, const KnownResources& known,
                                     const std::optional<planner::RuntimeContainer>& container,
                                     const std::optional<pod::Pod>& api_spec,
                                     const std::vector<planner::SpecSource>& sources,
                                     bool answer_when_decided) {
  v1::PlanContainerRequest request;
  v1::RuntimePod* pod = request.mutable_pod();
  pod->set_uid(sandbox.pod_uid);
  pod->set_namespace_(sandbox.namespace_name);
  pod->set_name(sandbox.pod_name);
  pod->mutable_annotations()->insert(sandbox.annotations.begin(), sandbox.annotations.end());
  pod->set_cgroup_parent(sandbox.cgroup_parent);
  for (const auto& [name, resources] : known) {
    v1::RuntimeContainer* c = pod->add_containers();
    c->set_name(name);
    ResourcesToProto(resources, c->mutable_resources());
  }
  if (container) {
    request.mutable_container()->set_name(container->name);
    ResourcesToProto(container->resources, request.mutable_container()->mutable_resources());
  }
  if (api_spec) rpc::PodToProto(*api_spec, request.mutable_pod_spec());
  // Always set: unset would mean topologyd's default, not the shim's configured list.
  v1::SpecSources* daemon_sources = request.mutable_spec_sources();
  for (planner::SpecSource source : sources) {
    daemon_sources->add_sources(std::string(planner::ToString(source)));
  }
  request.set_answer_when_decided(answer_when_decided);
  return request;
}

planner::RuntimePod RuntimePodOf(const SandboxRecord& sandbox, const KnownResources& known) {
  planner::RuntimePod pod;
  pod.uid = sandbox.pod_uid;
  pod.namespace_name = sandbox.namespace_name;
  pod.name = sandbox.pod_name;
  pod.annotations = sandbox.annotations;
  pod.cgroup_parent = sandbox.cgroup_parent;
  for (const auto& [name, resources] : known) pod.containers.push_back({name, resources});
  return pod;
}

}  // namespace topologyd::shim
