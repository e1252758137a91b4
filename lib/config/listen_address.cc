#include "lib/config/listen_address.h"

#include <arpa/inet.h>

#include <charconv>

#include "fmt/format.h"

namespace topologyd::config {
namespace {

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("\"{}\": {}; expected HOST:PORT, e.g. 127.0.0.1:9469 or [::1]:9469", text, why));
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  if (text.empty()) return Bad(text, "required");
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  ListenAddress address;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    address.ipv6 = true;
  }
  address.host = std::string(host);
  unsigned char parsed[16];
  const int family = address.ipv6 ? AF_INET6 : AF_INET;
  if (address.host.empty() || ::inet_pton(family, address.host.c_str(), parsed) != 1) {
    return Bad(text, address.ipv6 ? "not an IPv6 address"
                                  : "not an IPv4 address (an IPv6 address goes in brackets; "
                                    "host names are not accepted)");
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port == 0 || port > 65535) {
    return Bad(text, "the port must be a number from 1 to 65535");
  }
  address.port = static_cast<uint16_t>(port);
  return address;
}

absl::Status CheckListenAddress(std::string_view text) { return ParseListenAddress(text).status(); }

}  // namespace topologyd::config
