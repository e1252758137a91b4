// The TCP listen addresses of the exports (`metrics.listen`): "HOST:PORT", where HOST is an
// IPv4 address ("127.0.0.1", "0.0.0.0") and PORT 1-65535. Host names are refused: the endpoint
// binds before name resolution is trustworthy at boot, and an address says exactly which
// interface is exposed. IPv6 addresses ("[::1]") are recognised and refused: Debian's civetweb,
// which serves the metrics, is built without IPv6.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topologyd::config {

struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};

// INVALID_ARGUMENT saying what is wrong and what is expected (the caller names the key).
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);
absl::Status CheckListenAddress(std::string_view text);

}  // namespace topologyd::config
