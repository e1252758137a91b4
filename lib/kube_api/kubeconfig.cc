#include "lib/kube_api/kubeconfig.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/config/yaml_documents.h"

namespace topologyd::kube_api {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::FailedPreconditionError(fmt::format("cannot read {} {}", what, path));
  return text.str();
}

}  // namespace

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string token, ReadFile(path, "token file"));
  absl::StripAsciiWhitespace(&token);
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return absl::FailedPreconditionError(
          fmt::format("token file {}: the token has a character not allowed in a header", path));
    }
  }
  return token;
}

namespace {

// The child of `map` at `key`, or an undefined node (yaml-cpp's own lookup of a missing key
// gives a node that throws when read).
YAML::Node Child(const YAML::Node& map, std::string_view key) {
  if (map.IsMap()) {
    for (const auto& kv : map) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

class Kubeconfig {
 public:
  Kubeconfig(std::string path, YAML::Node root) : path_(std::move(path)), root_(std::move(root)) {
    const size_t slash = path_.rfind('/');
    dir_ = slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash);
  }

  absl::Status Error(std::string_view key, std::string_view reason) const {
    return absl::InvalidArgumentError(fmt::format("kubeconfig {}: {}: {}", path_, key, reason));
  }

  // A string under `map` at `key`, or empty when absent.
  absl::StatusOr<std::string> String(const YAML::Node& map, std::string_view key,
                                     std::string_view path) const {
    YAML::Node value = Child(map, key);
    if (!value.IsDefined() || value.IsNull()) return std::string();
    if (!value.IsScalar()) return Error(fmt::format("{}.{}", path, key), "expected a string");
    return value.Scalar();
  }

  // The `inner` map (cluster, user, context) of the entry named `name` in the list `list`.
  absl::StatusOr<YAML::Node> Named(std::string_view list, std::string_view inner,
                                   std::string_view name) const {
    YAML::Node entries = Child(root_, list);
    if (entries.IsDefined() && !entries.IsNull() && !entries.IsSequence()) {
      return Error(list, "expected a list");
    }
    if (entries.IsSequence()) {
      for (const YAML::Node& entry : entries) {
        if (!entry.IsMap()) return Error(list, "expected a list of maps");
        YAML::Node n = Child(entry, "name");
        if (n.IsScalar() && n.Scalar() == name) {
          YAML::Node value = Child(entry, inner);
          if (!value.IsMap()) {
            return Error(fmt::format("{}[{}].{}", list, QuoteForMessage(name), inner),
                         "expected a map");
          }
          return value;
        }
      }
    }
    return Error(list, fmt::format("no entry named {}", QuoteForMessage(name)));
  }

  // The PEM in `<key>-data` (base64) or in the file `<key>` names; empty when neither is set.
  absl::StatusOr<std::string> Pem(const YAML::Node& map, std::string_view key,
                                  std::string_view path) const {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string data, String(map, fmt::format("{}-data", key), path));
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string file, String(map, key, path));
    if (!data.empty()) {
      std::string decoded;
      if (!absl::Base64Unescape(data, &decoded)) {
        return Error(fmt::format("{}.{}-data", path, key), "not valid base64");
      }
      return decoded;
    }
    if (file.empty()) return std::string();
    return ReadFile(Resolve(file), fmt::format("{}.{} of kubeconfig {}", path, key, path_));
  }

  std::string Resolve(const std::string& file) const {
    return file.starts_with('/') ? file : fmt::format("{}/{}", dir_, file);
  }

  const YAML::Node& root() const { return root_; }

 private:
  std::string path_;
  std::string dir_;
  YAML::Node root_;
};

absl::StatusOr<KubeApiConfig> ConfigFromKubeconfig(const Kubeconfig& kc) {
  KubeApiConfig config;
  if (!kc.root().IsMap()) return kc.Error("(top level)", "expected a map");
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string context_name, kc.String(kc.root(), "current-context", ""));
  if (context_name.empty()) return kc.Error("current-context", "required");
  TOPOLOGYD_ASSIGN_OR_RETURN(YAML::Node context, kc.Named("contexts", "context", context_name));
  const std::string context_path =
      fmt::format("contexts[{}].context", QuoteForMessage(context_name));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string cluster_name, kc.String(context, "cluster", context_path));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string user_name, kc.String(context, "user", context_path));
  if (cluster_name.empty()) return kc.Error(context_path + ".cluster", "required");

  TOPOLOGYD_ASSIGN_OR_RETURN(YAML::Node cluster, kc.Named("clusters", "cluster", cluster_name));
  const std::string cluster_path =
      fmt::format("clusters[{}].cluster", QuoteForMessage(cluster_name));
  TOPOLOGYD_ASSIGN_OR_RETURN(config.server, kc.String(cluster, "server", cluster_path));
  if (config.server.empty()) return kc.Error(cluster_path + ".server", "required");
  TOPOLOGYD_ASSIGN_OR_RETURN(config.certificate_authority,
                             kc.Pem(cluster, "certificate-authority", cluster_path));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string insecure,
                             kc.String(cluster, "insecure-skip-tls-verify", cluster_path));
  if (insecure == "true") {
    config.insecure_skip_tls_verify = true;
  } else if (!insecure.empty() && insecure != "false") {
    return kc.Error(cluster_path + ".insecure-skip-tls-verify", "expected true or false");
  }

  if (user_name.empty()) return config;  // no credentials: anonymous
  TOPOLOGYD_ASSIGN_OR_RETURN(YAML::Node user, kc.Named("users", "user", user_name));
  const std::string user_path = fmt::format("users[{}].user", QuoteForMessage(user_name));
  for (std::string_view unsupported : {"exec", "auth-provider", "username", "password"}) {
    if (Child(user, unsupported).IsDefined()) {
      return kc.Error(fmt::format("{}.{}", user_path, unsupported),
                      "not supported; use a client certificate, token or tokenFile");
    }
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(config.client_certificate,
                             kc.Pem(user, "client-certificate", user_path));
  TOPOLOGYD_ASSIGN_OR_RETURN(config.client_key, kc.Pem(user, "client-key", user_path));
  if (config.client_certificate.empty() != config.client_key.empty()) {
    return kc.Error(user_path, "client-certificate and client-key go together");
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(config.token, kc.String(user, "token", user_path));
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string token_file, kc.String(user, "tokenFile", user_path));
  if (!token_file.empty()) {
    config.token_file = kc.Resolve(token_file);
    TOPOLOGYD_RETURN_IF_ERROR(ReadToken(config.token_file).status());
  }
  return config;
}

}  // namespace

absl::StatusOr<KubeApiConfig> LoadKubeconfig(const std::string& path) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "kubeconfig"));
  YAML::Node root;
  if (std::optional<yaml::YamlError> error = yaml::LoadFirstYamlDocument(text, &root)) {
    return absl::InvalidArgumentError(
        fmt::format("kubeconfig {}: line {}: {}", path, error->mark.line + 1, error->message));
  }
  try {
    return ConfigFromKubeconfig(Kubeconfig(path, root));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("kubeconfig {}: {}", path, e.what()));
  }
}

absl::StatusOr<KubeApiConfig> InClusterConfig(const InClusterOptions& options) {
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value == nullptr ? "" : value);
  };
  const std::string host = options.host.empty() ? env("KUBERNETES_SERVICE_HOST") : options.host;
  const std::string port = options.port.empty() ? env("KUBERNETES_SERVICE_PORT") : options.port;
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  KubeApiConfig config;
  // An IPv6 address needs brackets in a URL, as net.JoinHostPort writes it.
  config.server = host.find(':') == std::string::npos ? fmt::format("https://{}:{}", host, port)
                                                      : fmt::format("https://[{}]:{}", host, port);
  TOPOLOGYD_ASSIGN_OR_RETURN(
      config.certificate_authority,
      ReadFile(options.service_account_dir + "/ca.crt", "service-account CA"));
  config.token_file = options.service_account_dir + "/token";
  TOPOLOGYD_RETURN_IF_ERROR(ReadToken(config.token_file).status());
  return config;
}

}  // namespace topologyd::kube_api
