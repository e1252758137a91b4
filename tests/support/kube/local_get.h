// A GET of a test server's own status endpoint on loopback (kubelet's healthz and pods,
// kube-scheduler's readyz): the body on HTTP 200, UNAVAILABLE with the reason otherwise.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace topologyd::testing::kube {

// `url` is http:// or https://; over https the server's certificate is not checked (these
// servers make their own at start).
absl::StatusOr<std::string> LocalGet(const std::string& url, size_t limit_bytes);

}  // namespace topologyd::testing::kube
