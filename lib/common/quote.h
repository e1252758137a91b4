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

// The escaping alone, whole: no quotes, nothing cut (for text known to be short, such as a
// path component).
inline std::string EscapeForMessage(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

inline std::string QuoteForMessage(std::string_view s, size_t max_bytes = kMaxQuotedBytes) {
  const size_t shown = s.size() < max_bytes ? s.size() : max_bytes;
  std::string out = "\"" + EscapeForMessage(s.substr(0, shown)) + "\"";
  if (shown < s.size()) out += fmt::format("...({} bytes)", s.size());
  return out;
}

}  // namespace topologyd
