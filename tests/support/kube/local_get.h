// A GET of a test server's own status endpoint on loopback (kubelet's healthz and pods,
// kube-scheduler's readyz): the body on HTTP 200, UNAVAILABLE with the reason otherwise.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::testing::kube {

// `url` is http:// or https://; over https the server's certificate is not checked (these
// servers make their own at start).
absl::StatusOr<std::string> LocalGet(const std::string& url, size_t limit_bytes);

// Polls `url` with LocalGet every 200 ms until it answers `want`, for up to `patience`. An
// error naming `program` and holding `log()` when the child `pid` exits first (`pid` is then
// -1) or time runs out.
absl::Status WaitUntilAnswers(pid_t& pid, const std::string& program, const std::string& url,
                              const std::string& want, std::chrono::seconds patience,
                              const std::function<std::string()>& log);

}  // namespace topologyd::testing::kube
