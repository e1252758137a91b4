// QuoteForMessage(): a value taken from a request or a file, quoted for an error message.
//
// Error messages travel in the gRPC status (grpc-message metadata, whose size is limited) and
// into logs, so raw input must not go there as is: one 100 KB field would turn an
// INVALID_ARGUMENT reply into RESOURCE_EXHAUSTED, and a NUL or newline would cut or forge log
// lines. The value is put in double quotes with `"` and `\` backslash-escaped and every other
// byte outside printable ASCII written as \xNN; at most `max_bytes` bytes of it are shown, and a
// shortened value is followed by `...(N bytes)` with its full length.
//
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "fmt/format.h"

namespace topologyd {

inline constexpr size_t kMaxQuotedBytes = 64;

inline std::string QuoteForMessage(std::string_view s, size_t max_bytes = kMaxQuotedBytes) {
  std::string out = "\"";
  const size_t shown = s.size() < max_bytes ? s.size() : max_bytes;
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (shown < s.size()) out += fmt::format("...({} bytes)", s.size());
  return out;
}

}  // namespace topologyd
