// KubeApiClient: the few calls topologyd makes to the Kubernetes API server over HTTPS
// (libcurl): one Pod read, for a CRI relay that must hand topologyd a full pod spec while CRI
// carries none (docs/pod-spec-sources.md); one Node read and a server-side apply, for the
// NodeResourceTopology publisher (docs/cluster.md). Credentials: kubeconfig.h.
//
// Thread-safety: a built client is immutable; every call may come from any thread. Calls reuse
// the connections of earlier ones (copies of a client share them); calls at once each get a
// connection of their own.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "lib/curl_easy/handle_pool.h"
#include "lib/kube_api/kubeconfig.h"
#include "lib/pod/pod.h"
#include "lib/pod/validate.h"

namespace topologyd::kube_api {

class KubeApiClient {
 public:
  explicit KubeApiClient(KubeApiConfig config);

  static absl::StatusOr<KubeApiClient> FromKubeconfig(const std::string& path,
                                                      absl::Duration timeout = kDefaultTimeout);
  static absl::StatusOr<KubeApiClient> InCluster(const InClusterOptions& options = {},
                                                 absl::Duration timeout = kDefaultTimeout);

  // GET /api/v1/namespaces/{namespace}/pods/{name}, parsed with pod::ParsePodManifest (so the
  // result equals parsing the same Pod from a manifest). Errors:
  //   INVALID_ARGUMENT     namespace or name invalid; the pod fails the manifest checks
  //   NOT_FOUND            HTTP 404
  //   FAILED_PRECONDITION  the pod's metadata.uid differs from `expected_uid` (the pod was
  //                        deleted and created again under the same name)
  //   UNAVAILABLE          any other HTTP status (with the API server's message), TLS and
  //                        connection errors, timeouts (with curl's message)
  absl::StatusOr<pod::Pod> GetPod(std::string_view namespace_name, std::string_view name,
                                  std::string_view expected_uid,
                                  size_t max_containers = pod::kDefaultMaxContainersPerPod) const;

  // The metadata.uid of Node `name` (GET /api/v1/nodes/{name}). Errors as Send() maps them.
  absl::StatusOr<std::string> GetNodeUid(std::string_view name) const;

  // Server-side apply (PATCH, application/apply-patch+yaml, force) of `object` at `path` (the
  // object's URL below the server, e.g. /apis/G/V/RESOURCE/NAME) as `field_manager`; returns
  // the object's new metadata.resourceVersion. Errors as Send() maps them.
  absl::StatusOr<std::string> Apply(const std::string& path, std::string_view field_manager,
                                    const std::string& object) const;

  struct Response {
    long code = 0;  // HTTP status, 2xx
    std::string body;
  };
  // One call: `method` on `path` (below the server, query included), with `body` when
  // `content_type` is set. An HTTP status other than 2xx is an error: 401 UNAUTHENTICATED, 403
  // PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED, 422 INVALID_ARGUMENT, any other
  // UNAVAILABLE, each with the method, the path and the API server's message. Transport
  // errors and timeouts are UNAVAILABLE.
  absl::StatusOr<Response> Send(std::string_view method, const std::string& path,
                                std::string_view content_type = "",
                                const std::string& body = "") const;

  const KubeApiConfig& config() const { return config_; }

 private:
  // The call itself: any HTTP status is a response.
  absl::StatusOr<Response> Transfer(std::string_view method, const std::string& path,
                                    std::string_view content_type = "",
                                    const std::string& body = "") const;

  KubeApiConfig config_;
  std::shared_ptr<curl_easy::HandlePool> handles_;
};

// RFC 3986 percent-encoding of one URL path segment.
std::string EscapePathSegment(std::string_view segment);

}  // namespace topologyd::kube_api
