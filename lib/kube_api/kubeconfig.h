// How topologyd reaches the Kubernetes API server: a kubeconfig's current context, or the
// in-cluster service account, read as client-go reads them.
//
// Supported: the cluster's server, certificate-authority(-data), insecure-skip-tls-verify; the
// user's client-certificate(-data), client-key(-data), token, tokenFile. Exec plugins, auth
// providers and basic auth are refused when named. Relative file paths in a kubeconfig are
// relative to its directory, as in kubectl. Certificates and keys are read once, into memory; a
// token file is read at every request, because service-account tokens rotate.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

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

// The token a token file holds, without surrounding white space. FAILED_PRECONDITION when the
// file cannot be read or the token could not go into an HTTP header.
absl::StatusOr<std::string> ReadToken(const std::string& path);

}  // namespace topologyd::kube_api
