// Where the shim gets a pod's full spec, in the configured order of sources: the API server,
// the topologyd.io/resources annotation, or nothing (the caller then estimates each container
// from the CRI resources). A spec found once is kept for the pod's uid.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "lib/kube_api/kube_api_client.h"
#include "lib/pod/pod.h"
#include "lib/shim/pod_book.h"

#include "shim/shim_config.h"

namespace topologyd::shim {

class PodSpecResolver {
 public:
  // `api` may be empty when the apiServer source is not configured.
  PodSpecResolver(const ShimConfig& config, std::optional<kube_api::KubeApiClient> api);

  // The pod's full spec, or nullopt when the pod must be estimated. INVALID_ARGUMENT for a
  // resources annotation that is present but malformed (the pod author must fix it; guessing
  // instead would place the pod differently from what it asks).
  absl::StatusOr<std::optional<pod::Pod>> FullSpec(const SandboxRecord& sandbox);
  void Forget(const std::string& pod_uid);

 private:
  const std::vector<PodSpecSource> sources_;
  const std::optional<kube_api::KubeApiClient> api_;
  absl::Mutex mu_;
  std::map<std::string, pod::Pod> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::shim
