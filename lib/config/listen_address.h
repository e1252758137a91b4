// The TCP listen addresses of the exports (`metrics.listen`): "HOST:PORT", where HOST is an
// IPv4 address ("127.0.0.1", "0.0.0.0") or an IPv6 one in brackets ("[::1]", "[::]") and PORT
// 1-65535. Host names are refused: the endpoint binds before name resolution is trustworthy at
// boot, and an address says exactly which interface is exposed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topologyd::config {

struct ListenAddress {
  std::string host;  // without brackets
  uint16_t port = 0;
  bool ipv6 = false;
};

// INVALID_ARGUMENT saying what is wrong and what is expected (the caller names the key).
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);
absl::Status CheckListenAddress(std::string_view text);

}  // namespace topologyd::config
