#include "shim/pod_spec_resolver.h"

#include "fmt/format.h"
#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"
#include "lib/podspec/resources_annotation.h"

namespace topologyd::shim {

PodSpecResolver::PodSpecResolver(const ShimConfig& config,
                                 std::optional<kube_api::KubeApiClient> api)
    : sources_(config.pod_spec.sources), api_(std::move(api)) {}

absl::StatusOr<std::optional<pod::Pod>> PodSpecResolver::FullSpec(const SandboxRecord& sandbox) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = known_.find(sandbox.pod_uid); it != known_.end()) return it->second;
  }
  std::optional<pod::Pod> found;
  for (PodSpecSource source : sources_) {
    if (source == PodSpecSource::kEstimate) break;
    if (source == PodSpecSource::kAnnotation) {
      absl::StatusOr<std::optional<pod::Pod>> from_annotation = podspec::PodFromResourcesAnnotation(
          sandbox.pod_uid, sandbox.namespace_name, sandbox.pod_name, sandbox.annotations,
          pod::kDefaultMaxContainersPerPod);
      if (!from_annotation.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("pod {}/{}: annotation {}: {}", sandbox.namespace_name, sandbox.pod_name,
                        podspec::kResourcesAnnotation, from_annotation.status().message()));
      }
      if (*from_annotation) {
        found = std::move(**from_annotation);
        break;
      }
      continue;
    }
    if (!api_) continue;
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
  }
  absl::MutexLock lock(&mu_);
  known_[sandbox.pod_uid] = found;
  return found;
}

std::optional<std::optional<pod::Pod>> PodSpecResolver::Decided(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  if (auto it = known_.find(pod_uid); it != known_.end()) return it->second;
  return std::nullopt;
}

void PodSpecResolver::Forget(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  known_.erase(pod_uid);
}

}  // namespace topologyd::shim
