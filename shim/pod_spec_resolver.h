// Where the shim gets a pod's full spec, in the configured order of sources: the API server,
// the topologyd.io/resources annotation, or nothing (the caller then estimates each container
// from the CRI resources). The answer is decided once per pod uid and kept until the pod's
// sandbox is removed, so every container of a pod is placed from the same source and an API
// server that fails is asked once per pod, not once per call.
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
  // What FullSpec decided for the pod, without asking any source (so it never waits):
  // nullopt when it has not been asked since the pod was last forgotten.
  std::optional<std::optional<pod::Pod>> Decided(const std::string& pod_uid);
  void Forget(const std::string& pod_uid);

 private:
  const std::vector<PodSpecSource> sources_;
  const std::optional<kube_api::KubeApiClient> api_;
  absl::Mutex mu_;
  std::map<std::string, std::optional<pod::Pod>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::shim
