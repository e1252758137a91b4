#include "lib/nrt_api/kube_nrt_transport.h"

#include "absl/time/time.h"
#include "fmt/format.h"

#include "lib/common/absl_fmt.h"

namespace topologyd::nrt_api {
namespace {

// The verb an authorizer's refusal names ("... cannot create resource ..."), or `otherwise`.
std::string DeniedVerb(std::string_view message, std::string_view otherwise) {
  constexpr std::string_view kCannot = "cannot ";
  const size_t at = message.find(kCannot);
  if (at == std::string_view::npos) return std::string(otherwise);
  const size_t start = at + kCannot.size();
  const size_t end = message.find(' ', start);
  std::string_view verb = message.substr(start, end == std::string_view::npos ? end : end - start);
  const bool word = !verb.empty() && verb.size() <= 16 &&
                    verb.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string_view::npos;
  return std::string(word ? verb : otherwise);
}

}  // namespace

absl::Status ExplainNodeError(const absl::Status& status, const std::string& node) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return absl::FailedPreconditionError(fmt::format(
          "Node {} is not registered in the API server; the object is owned by its Node and is "
          "published once the Node exists (nrt.nodeName names it)",
          node));
    case absl::StatusCode::kPermissionDenied:
      return absl::PermissionDeniedError(fmt::format(
          "RBAC: this identity may not get nodes (the ClusterRole of deploy/rbac.yaml grants "
          "it): {}",
          status.message()));
    case absl::StatusCode::kUnauthenticated:
      return absl::UnauthenticatedError(
          fmt::format("the API server refused the credentials: {}", status.message()));
    default:
      return status;
  }
}

absl::Status ExplainApplyError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return absl::FailedPreconditionError(fmt::format(
          "the NodeResourceTopology CRD ({}, version v1alpha2) is not installed in the API "
          "server: {}",
          kNrtResource, status.message()));
    case absl::StatusCode::kPermissionDenied:
      // Applying creates the object the first time (verb create), updates it after (patch).
      return absl::PermissionDeniedError(fmt::format(
          "RBAC: this identity may not {} {} (the ClusterRole of deploy/rbac.yaml "
          "grants get, create and patch): {}",
          DeniedVerb(std::string(status.message()), "patch"), kNrtResource, status.message()));
    case absl::StatusCode::kUnauthenticated:
      return absl::UnauthenticatedError(
          fmt::format("the API server refused the credentials: {}", status.message()));
    case absl::StatusCode::kInvalidArgument:
      return absl::InvalidArgumentError(
          fmt::format("the API server refused the object (is the installed CRD the v1alpha2 "
                      "one?): {}",
                      status.message()));
    default:
      return status;
  }
}

absl::StatusOr<std::string> KubeNrtTransport::NodeUid(const std::string& node) {
  absl::StatusOr<std::string> uid = client_.GetNodeUid(node);
  if (!uid.ok()) return ExplainNodeError(uid.status(), node);
  return uid;
}

absl::Status KubeNrtTransport::Apply(const std::string& name, const std::string& object) {
  absl::StatusOr<std::string> applied =
      client_.Apply(fmt::format("{}/{}", kNrtCollectionPath, kube_api::EscapePathSegment(name)),
                    kFieldManager, object);
  return applied.ok() ? absl::OkStatus() : ExplainApplyError(applied.status());
}

absl::StatusOr<kube_api::KubeApiClient> ClientFromConfig(const config::NrtApiServerConfig& config) {
  const absl::Duration timeout = absl::FromChrono(config.timeout);
  absl::StatusOr<kube_api::KubeApiClient> client =
      config.kubeconfig == config::kInCluster
          ? kube_api::KubeApiClient::InCluster({}, timeout)
          : kube_api::KubeApiClient::FromKubeconfig(config.kubeconfig, timeout);
  if (!client.ok()) {
    return absl::Status(client.status().code(),
                        fmt::format("nrt.apiServer.kubeconfig: {}", client.status().message()));
  }
  return client;
}

}  // namespace topologyd::nrt_api
