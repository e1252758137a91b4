// The libcurl PlacementTransport: one HTTP exchange per call against a Placement endpoint, over
// the connection of the call before when it is still open, with the headers every call needs
// (docs/placement.md, "Sync"): the microversion, JSON, and the Keystone token in X-Auth-Token (with
// Placement's noauth2 test mode, the token "admin").
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "lib/curl_easy/curl_easy.h"
#include "lib/curl_easy/handle_pool.h"
#include "lib/placement/sync.h"

namespace topologyd::placement {

struct HttpEndpoint {
  std::string url;    // e.g. http://127.0.0.1:8778 or https://cloud.example/placement
  std::string token;  // X-Auth-Token; empty = none
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
  curl_easy::TlsOptions tls;
  // When set, a call in progress ends (UNAVAILABLE, within about a second) once it turns
  // true: the daemon's syncer stops without waiting out `timeout`.
  const std::atomic<bool>* cancel = nullptr;
};

class CurlPlacementTransport : public PlacementTransport {
 public:
  // INVALID_ARGUMENT for a url that is not http:// or https://.
  [[nodiscard]] static absl::StatusOr<CurlPlacementTransport> Create(HttpEndpoint endpoint);

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request,
                                    const std::string& microversion) override;

 private:
  explicit CurlPlacementTransport(HttpEndpoint endpoint)
      : endpoint_(std::move(endpoint)), handles_(curl_easy::HandlePool::Create()) {}
  HttpEndpoint endpoint_;
  std::shared_ptr<curl_easy::HandlePool> handles_;
};

// What SyncOptions::wait_before_retry is in real use: 50-150 ms times the attempt, jittered so
// that two agents in conflict do not retry in step.
void JitteredRetryWait(int attempt);

}  // namespace topologyd::placement
