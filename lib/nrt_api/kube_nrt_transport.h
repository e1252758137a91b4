// The NodeResourceTopology publisher's way to the API server: KubeApiClient, with each failure
// told in an operator's terms (the Node not registered, the CRD not installed, the RBAC verb
// missing, the credentials refused).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "lib/config/config.h"
#include "lib/kube_api/kube_api_client.h"
#include "lib/nrt_api/nrt_api_publisher.h"

namespace topologyd::nrt_api {

inline constexpr std::string_view kNrtResource = "noderesourcetopologies.topology.node.k8s.io";
inline constexpr std::string_view kNrtCollectionPath =
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";

class KubeNrtTransport final : public NrtApiTransport {
 public:
  explicit KubeNrtTransport(kube_api::KubeApiClient client) : client_(std::move(client)) {}
  absl::StatusOr<std::string> NodeUid(const std::string& node) override;
  absl::Status Apply(const std::string& name, const std::string& object) override;

 private:
  kube_api::KubeApiClient client_;
};

// The client `nrt.apiServer` describes: its kubeconfig, or the in-cluster service account.
// FAILED_PRECONDITION / INVALID_ARGUMENT, prefixed "nrt.apiServer.kubeconfig: ", when the
// credentials cannot be read.
absl::StatusOr<kube_api::KubeApiClient> ClientFromConfig(const config::NrtApiServerConfig& config);

// The errors of the two calls, explained (pure; KubeNrtTransport uses them).
absl::Status ExplainNodeError(const absl::Status& status, const std::string& node);
absl::Status ExplainApplyError(const absl::Status& status);

}  // namespace topologyd::nrt_api
