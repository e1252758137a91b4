#include "lib/kube_api/kube_api_client.h"

#include <curl/curl.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/curl_easy/curl_easy.h"
#include "lib/pod/pod_manifest.h"

namespace topologyd::kube_api {
namespace {

// A Pod is a few KiB, the objects we write less; this only bounds what a wrong server can make
// us buffer.
constexpr size_t kMaxBodyBytes = 16 << 20;

// The message of a Kubernetes Status body, or empty.
std::string StatusMessage(const std::string& body) {
  const nlohmann::json status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!status.is_object()) return "";
  auto message = status.find("message");
  if (message == status.end() || !message->is_string()) return "";
  return QuoteForMessage(message->get<std::string>(), 512);
}

absl::StatusCode CodeOfHttpStatus(long code) {
  switch (code) {
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAborted;
    case 422:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kUnavailable;
  }
}

// A string field of a JSON object's metadata, or empty.
std::string MetadataField(const std::string& body, const char* field) {
  const nlohmann::json object = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto value = metadata->find(field);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace

std::string EscapePathSegment(std::string_view segment) {
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

KubeApiClient::KubeApiClient(KubeApiConfig config)
    : config_(std::move(config)), handles_(curl_easy::HandlePool::Create()) {
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

absl::StatusOr<KubeApiClient::Response> KubeApiClient::Transfer(std::string_view method,
                                                                const std::string& path,
                                                                std::string_view content_type,
                                                                const std::string& body) const {
  // Declared first, so given back (its options reset) after everything they point to is gone.
  TOPOLOGYD_ASSIGN_OR_RETURN(curl_easy::PooledHandle curl, handles_->Acquire());
  CURL* h = curl.get();
  const std::string url = config_.server + path;

  std::string token = config_.token;
  if (!config_.token_file.empty()) {
    absl::StatusOr<std::string> read = ReadToken(config_.token_file);
    if (!read.ok()) return absl::UnavailableError(std::string(read.status().message()));
    token = *std::move(read);
  }
  curl_easy::Headers headers(curl_slist_append(nullptr, "Accept: application/json"));
  if (!token.empty()) curl_easy::AppendHeader(headers, "Authorization: Bearer " + token);
  if (!content_type.empty()) {
    curl_easy::AppendHeader(headers, fmt::format("Content-Type: {}", content_type));
  }
  if (!headers) return absl::ResourceExhaustedError("cannot build the request headers");

  char error[CURL_ERROR_SIZE] = {};
  curl_easy::ResponseBody response_body(kMaxBodyBytes);
  curl_easy::SetCommonOptions(h, url,
                              std::chrono::milliseconds(absl::ToInt64Milliseconds(config_.timeout)),
                              error, headers.get(), &response_body);
  curl_easy::SetTlsOptions(h, {.insecure_skip_verify = config_.insecure_skip_tls_verify,
                               .ca_pem = config_.certificate_authority,
                               .client_certificate_pem = config_.client_certificate,
                               .client_key_pem = config_.client_key});
  const std::string verb(method);
  if (verb != "GET") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, verb.c_str());
  if (!content_type.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }

  const CURLcode rc = curl_easy_perform(h);
  if (response_body.too_large) {
    return absl::UnavailableError(
        fmt::format("{} {}: the response is larger than {} bytes", verb, url, kMaxBodyBytes));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(fmt::format("{} {}: {}{}{}", verb, url, curl_easy_strerror(rc),
                                              error[0] != '\0' ? ": " : "", error));
  }
  Response response;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.code);
  response.body = std::move(response_body.text);
  return response;
}

absl::StatusOr<KubeApiClient::Response> KubeApiClient::Send(std::string_view method,
                                                            const std::string& path,
                                                            std::string_view content_type,
                                                            const std::string& body) const {
  TOPOLOGYD_ASSIGN_OR_RETURN(Response response, Transfer(method, path, content_type, body));
  if (response.code >= 200 && response.code < 300) return response;
  const std::string message = StatusMessage(response.body);
  return absl::Status(CodeOfHttpStatus(response.code),
                      fmt::format("{} {}: HTTP {}{}{}", method, path, response.code,
                                  message.empty() ? "" : ": ", message));
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
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}",
                                       EscapePathSegment(namespace_name), EscapePathSegment(name));

  TOPOLOGYD_ASSIGN_OR_RETURN(Response response, Transfer("GET", path));
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

absl::StatusOr<std::string> KubeApiClient::GetNodeUid(std::string_view name) const {
  TOPOLOGYD_ASSIGN_OR_RETURN(Response response,
                             Send("GET", "/api/v1/nodes/" + EscapePathSegment(name)));
  std::string uid = MetadataField(response.body, "uid");
  if (uid.empty()) {
    return absl::UnavailableError(
        fmt::format("API server answered for node {} without a metadata.uid", name));
  }
  return uid;
}

absl::StatusOr<std::string> KubeApiClient::Apply(const std::string& path,
                                                 std::string_view field_manager,
                                                 const std::string& object) const {
  // JSON is YAML: the apply content type takes the document as it is. force: the node agent
  // owns the fields it publishes, whoever set them last.
  TOPOLOGYD_ASSIGN_OR_RETURN(
      Response response,
      Send("PATCH",
           fmt::format("{}?fieldManager={}&force=true", path, EscapePathSegment(field_manager)),
           "application/apply-patch+yaml", object));
  return MetadataField(response.body, "resourceVersion");
}

}  // namespace topologyd::kube_api
