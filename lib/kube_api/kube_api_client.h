// KubeApiClient: reads one Pod from the Kubernetes API server over HTTPS (libcurl), for a CRI
// relay that must hand topologyd a full pod spec while CRI carries none.
//
// Credentials come from a kubeconfig (the current context's cluster and user) or from the
// in-cluster service account, as client-go takes them; docs/pod-spec-sources.md says which
// RBAC the node needs. Supported: the cluster's server, certificate-authority(-data),
// insecure-skip-tls-verify; the user's client-certificate(-data), client-key(-data), token,
// tokenFile. Exec plugins, auth providers and basic auth are refused when named. Relative file
// paths in a kubeconfig are relative to its directory, as in kubectl. Certificates and keys
// are read once, when the client is built, and handed to libcurl from memory; a token file is
// read at every request, because service-account tokens rotate.
//
// Thread-safety: a built client is immutable; GetPod may be called from any thread (each call
// uses its own curl handle).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "lib/pod/pod.h"
#include "lib/pod/validate.h"

namespace topologyd::kube_api {

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";
inline constexpr absl::Duration kDefaultTimeout = absl::Seconds(5);

// How to reach and authenticate to the API server, every credential in memory.
struct KubeApiConfig {
  std::string server;                 // "https://host:port" (a path prefix is kept)
  std::string certificate_authority;  // PEM; empty: the system's CAs
  bool insecure_skip_tls_verify = false;
  std::string client_certificate;  // PEM; with client_key, TLS client authentication
  std::string client_key;          // PEM
  std::string token;               // a bearer token
  std::string token_file;          // read at each request; wins over `token`, as in client-go
  absl::Duration timeout = kDefaultTimeout;  // for a whole request, connection included
};

// The current context of the kubeconfig at `path`. INVALID_ARGUMENT naming the kubeconfig and
// the key for content that is wrong or unsupported; FAILED_PRECONDITION for a file (the
// kubeconfig or one it names) that cannot be read.
absl::StatusOr<KubeApiConfig> LoadKubeconfig(const std::string& path);

struct InClusterOptions {
  // Empty: from the environment, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT.
  std::string host;
  std::string port;
  // Holds `token` and `ca.crt`; tests point it elsewhere.
  std::string service_account_dir = std::string(kServiceAccountDir);
};

// The in-cluster configuration: https://host:port, the service account's CA and token file.
// FAILED_PRECONDITION when the environment or the files are missing.
absl::StatusOr<KubeApiConfig> InClusterConfig(const InClusterOptions& options = {});

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

  const KubeApiConfig& config() const { return config_; }

 private:
  KubeApiConfig config_;
};

}  // namespace topologyd::kube_api
