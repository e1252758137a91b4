#include "shim/pod_spec_resolver.h"

#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"
#include "lib/podspec/resources_annotation.h"

namespace topologyd::shim {

PodSpecResolver::PodSpecResolver(const ShimConfig& config,
                                 std::optional<kube_api::KubeApiClient> api)
    : sources_(config.pod_spec.sources), api_(std::move(api)) {}

std::optional<pod::Pod> PodSpecResolver::ApiServerSpec(const SandboxRecord& sandbox) {
  if (!api_) return std::nullopt;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = known_.find(sandbox.pod_uid); it != known_.end()) return it->second;
  }
  std::optional<pod::Pod> found;
  for (PodSpecSource source : sources_) {
    if (source == PodSpecSource::kEstimate) break;
    if (source == PodSpecSource::kAnnotation) {
      // topologyd reads it (and says what is wrong with a malformed one).
      if (sandbox.annotations.contains(std::string(podspec::kResourcesAnnotation))) break;
      continue;
    }
    absl::StatusOr<pod::Pod> from_api =
        api_->GetPod(sandbox.namespace_name, sandbox.pod_name, sandbox.pod_uid);
    if (from_api.ok()) {
      found = std::move(*from_api);
      break;
    }
    // The next source decides; the API server's answer is logged so the operator sees why.
    spdlog::warn("pod {}/{} (uid {}): the API server did not give its spec: {}",
                 sandbox.namespace_name, sandbox.pod_name, sandbox.pod_uid,
                 from_api.status().message());
    break;  // it is the only source the shim asks
  }
  absl::MutexLock lock(&mu_);
  known_[sandbox.pod_uid] = found;
  return found;
}

void PodSpecResolver::Forget(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  known_.erase(pod_uid);
}

}  // namespace topologyd::shim
