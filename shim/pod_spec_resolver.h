// The shim's own pod spec source, the API server, in the configured order of sources: it is
// asked unless a source listed before it decides (the topologyd.io/resources annotation is
// on the pod, or the estimate comes first); topologyd reads the annotation or estimates from
// the CRI resources itself (PlanContainer). The answer is decided once per pod uid and kept
// until the pod's sandbox is removed, so every container of a pod is placed from the same
// source and an API server that fails is asked once per pod, not once per call.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
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

  // The pod's spec from the API server, or nullopt when topologyd's sources decide.
  std::optional<pod::Pod> ApiServerSpec(const SandboxRecord& sandbox);
  void Forget(const std::string& pod_uid);

 private:
  const std::vector<PodSpecSource> sources_;
  const std::optional<kube_api::KubeApiClient> api_;
  absl::Mutex mu_;
  std::map<std::string, std::optional<pod::Pod>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::shim
