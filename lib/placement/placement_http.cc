#include "lib/placement/placement_http.h"

#include <curl/curl.h>

#include <memory>
#include <random>
#include <thread>

#include "fmt/format.h"

#include "lib/common/status_macros.h"
#include "lib/curl_easy/curl_easy.h"
#include "lib/curl_easy/handle_pool.h"

namespace topologyd::placement {
namespace {

// Placement's answers for one node's tree are a few KiB; this only bounds a broken server.
constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;

// libcurl calls it during the transfer, at least about once a second while nothing moves;
// non-zero aborts the transfer.
int AbortWhenCancelled(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel->load() ? 1 : 0;
}

}  // namespace

absl::StatusOr<CurlPlacementTransport> CurlPlacementTransport::Create(HttpEndpoint endpoint) {
  if (!endpoint.url.starts_with("http://") && !endpoint.url.starts_with("https://")) {
    return absl::InvalidArgumentError(
        fmt::format("endpoint \"{}\": not an http:// or https:// URL", endpoint.url));
  }
  while (endpoint.url.ends_with("/")) endpoint.url.pop_back();
  return CurlPlacementTransport(std::move(endpoint));
}

absl::StatusOr<HttpResponse> CurlPlacementTransport::Send(const HttpRequest& request,
                                                          const std::string& microversion) {
  // Declared first, so given back (its options reset) after everything they point to is gone.
  TOPOLOGYD_ASSIGN_OR_RETURN(curl_easy::PooledHandle curl, handles_->Acquire());
  CURL* h = curl.get();

  curl_easy::Headers headers(curl_slist_append(nullptr, "Accept: application/json"));
  const auto add = [&headers](const std::string& line) { curl_easy::AppendHeader(headers, line); };
  if (!microversion.empty()) add("OpenStack-API-Version: placement " + microversion);
  if (!endpoint_.token.empty()) add("X-Auth-Token: " + endpoint_.token);
  std::string payload;
  if (request.body.has_value()) {
    add("Content-Type: application/json");
    payload = request.body->dump();
  }
  if (!headers) return absl::ResourceExhaustedError("cannot build the request headers");

  const std::string url = endpoint_.url + request.path;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy::ResponseBody body(kMaxBodyBytes);
  curl_easy::SetCommonOptions(h, url, endpoint_.timeout, error, headers.get(), &body);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.body.has_value()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  } else if (request.method == "DELETE" || request.method == "PUT") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
  }
  if (endpoint_.cancel != nullptr) {
    if (endpoint_.cancel->load())
      return absl::UnavailableError(request.method + " " + url + ": cancelled");
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, AbortWhenCancelled);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(endpoint_.cancel));
  }
  curl_easy::SetTlsOptions(h, endpoint_.tls);

  const CURLcode rc = curl_easy_perform(h);
  const std::string what = request.method + " " + url;
  if (body.too_large) {
    return absl::UnavailableError(
        fmt::format("{}: the response is larger than {} bytes", what, kMaxBodyBytes));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(fmt::format("{}: {}{}{}", what, curl_easy_strerror(rc),
                                              error[0] != '\0' ? ": " : "", error));
  }
  HttpResponse response;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(body.text);
  return response;
}

void JitteredRetryWait(int attempt) {
  thread_local std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<int> jitter(50, 150);
  std::this_thread::sleep_for(std::chrono::milliseconds(jitter(random) * attempt));
}

}  // namespace topologyd::placement
