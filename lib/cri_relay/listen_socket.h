// The relay's listening path, checked before gRPC binds it: gRPC would replace any socket
// file in the way, a live one included, and reports a failed bind only in its log.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace topologyd::cri_relay {

// OK when `path` can be bound: it fits a Unix socket address, its directory exists, and it
// is either absent or a stale socket (one nobody accepts on), which is removed. Otherwise
// FAILED_PRECONDITION (INVALID_ARGUMENT for a bad path) naming the path and the reason.
absl::Status PrepareListenPath(const std::string& path);

// Why binding `path` fails, found by binding it ourselves; for the error when gRPC could not.
std::string DescribeBindFailure(const std::string& path);

}  // namespace topologyd::cri_relay
