#include "lib/kube_api/kube_api_client.h"

#include <curl/curl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/config/yaml_documents.h"
#include "lib/curl_easy/curl_easy.h"
#include "lib/pod/pod_manifest.h"

namespace topologyd::kube_api {
namespace {

// A Pod is a few KiB; this only bounds what a wrong server can make us buffer.
constexpr size_t kMaxBodyBytes = 16 << 20;

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

// A token as a file holds it: surrounding white space (a trailing newline) is not part of it.
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

// --- kubeconfig ---

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

// --- HTTP ---

// RFC 3986 percent-encoding of one path segment.
std::string EscapeSegment(std::string_view segment) {
  std::string out;
  for (unsigned char c : segment) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

struct Response {
  long code = 0;
  std::string body;
};

absl::StatusOr<Response> HttpGet(const KubeApiConfig& config, const std::string& url) {
  TOPOLOGYD_ASSIGN_OR_RETURN(curl_easy::Handle curl, curl_easy::NewHandle());
  CURL* h = curl.get();

  std::string token = config.token;
  if (!config.token_file.empty()) {
    absl::StatusOr<std::string> read = ReadToken(config.token_file);
    if (!read.ok()) return absl::UnavailableError(std::string(read.status().message()));
    token = *std::move(read);
  }
  curl_easy::Headers headers(curl_slist_append(nullptr, "Accept: application/json"));
  if (!token.empty()) curl_easy::AppendHeader(headers, "Authorization: Bearer " + token);
  if (!headers) return absl::ResourceExhaustedError("cannot build the request headers");

  char error[CURL_ERROR_SIZE] = {};
  curl_easy::ResponseBody body(kMaxBodyBytes);
  curl_easy::SetCommonOptions(h, url,
                              std::chrono::milliseconds(absl::ToInt64Milliseconds(config.timeout)),
                              error, headers.get(), &body);

  curl_easy::SetTlsOptions(h, {.insecure_skip_verify = config.insecure_skip_tls_verify,
                               .ca_pem = config.certificate_authority,
                               .client_certificate_pem = config.client_certificate,
                               .client_key_pem = config.client_key});

  const CURLcode rc = curl_easy_perform(h);
  if (body.too_large) {
    return absl::UnavailableError(
        fmt::format("GET {}: the response is larger than {} bytes", url, kMaxBodyBytes));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(fmt::format("GET {}: {}{}{}", url, curl_easy_strerror(rc),
                                              error[0] != '\0' ? ": " : "", error));
  }
  Response response;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.code);
  response.body = std::move(body.text);
  return response;
}

// The message of a Kubernetes Status body, or empty.
std::string StatusMessage(const std::string& body) {
  const nlohmann::json status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!status.is_object()) return "";
  auto message = status.find("message");
  if (message == status.end() || !message->is_string()) return "";
  return QuoteForMessage(message->get<std::string>(), 512);
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

KubeApiClient::KubeApiClient(KubeApiConfig config) : config_(std::move(config)) {
  while (config_.server.ends_with('/')) config_.server.pop_back();
}

absl::StatusOr<KubeApiClient> KubeApiClient::FromKubeconfig(const std::string& path,
                                                            absl::Duration timeout) {
  TOPOLOGYD_ASSIGN_OR_RETURN(KubeApiConfig config, LoadKubeconfig(path));
  config.timeout = timeout;
  return KubeApiClient(std::move(config));
}

absl::StatusOr<KubeApiClient> KubeApiClient::InCluster(const InClusterOptions& options,
                                                       absl::Duration timeout) {
  TOPOLOGYD_ASSIGN_OR_RETURN(KubeApiConfig config, InClusterConfig(options));
  config.timeout = timeout;
  return KubeApiClient(std::move(config));
}

absl::StatusOr<pod::Pod> KubeApiClient::GetPod(std::string_view namespace_name,
                                               std::string_view name, std::string_view expected_uid,
                                               size_t max_containers) const {
  auto at = [](std::string_view field, const absl::Status& s) {
    return s.ok() ? s : absl::InvalidArgumentError(fmt::format("{}: {}", field, s.message()));
  };
  TOPOLOGYD_RETURN_IF_ERROR(at("namespace", pod::ValidateNamespace(namespace_name)));
  TOPOLOGYD_RETURN_IF_ERROR(at("pod name", pod::ValidatePodName(name)));
  const std::string id = fmt::format("{}/{}", namespace_name, name);
  const std::string url = fmt::format("{}/api/v1/namespaces/{}/pods/{}", config_.server,
                                      EscapeSegment(namespace_name), EscapeSegment(name));

  TOPOLOGYD_ASSIGN_OR_RETURN(Response response, HttpGet(config_, url));
  if (response.code == 404) {
    return absl::NotFoundError(fmt::format("API server has no pod {}", id));
  }
  if (response.code != 200) {
    const std::string message = StatusMessage(response.body);
    return absl::UnavailableError(fmt::format("API server answered HTTP {} for pod {}{}{}",
                                              response.code, id, message.empty() ? "" : ": ",
                                              message));
  }
  absl::StatusOr<pod::Pod> pod = pod::ParsePodManifest(response.body, max_containers);
  if (!pod.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("pod {} from the API server: {}", id, pod.status().message()));
  }
  if (pod->namespace_name != namespace_name || pod->name != name) {
    return absl::UnavailableError(fmt::format("API server answered with pod {}/{} for pod {}",
                                              pod->namespace_name, pod->name, id));
  }
  if (pod->uid != expected_uid) {
    return absl::FailedPreconditionError(
        fmt::format("API server has pod {} with uid {}, the sandbox has uid {}", id,
                    QuoteForMessage(pod->uid), QuoteForMessage(expected_uid)));
  }
  return pod;
}

}  // namespace topologyd::kube_api
