#include "lib/config/listen_address.h"

#include <arpa/inet.h>

#include <charconv>

#include "fmt/format.h"

namespace topologyd::config {
namespace {

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("\"{}\": {}; expected IPV4-ADDRESS:PORT, e.g. 127.0.0.1:9469", text, why));
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  if (text.empty()) return Bad(text, "required");
  if (text.front() == '[') {
    return Bad(text,
               "IPv6 is not supported (the HTTP server, Debian's civetweb, is built without it)");
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "no port");
  ListenAddress address;
  address.host = std::string(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  in_addr parsed{};
  if (address.host.empty() || ::inet_pton(AF_INET, address.host.c_str(), &parsed) != 1) {
    return Bad(text, "not an IPv4 address (host names are not accepted)");
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
