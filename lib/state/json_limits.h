// Guards for JSON read from files topologyd does not control (its own checkpoint, kubelet's).
//
// nlohmann::json parses any nesting depth iteratively, but dump() and copies recurse once per
// level: a corrupt file of 100,000 nested arrays would overflow the stack wherever the value is
// serialized. CheckJsonNesting() refuses such text before it is parsed; real checkpoints nest
// a handful of levels. ParseErrorForMessage() and JsonForMessage() keep the input that an
// error message repeats short and escaped.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::state {

// Deeper nesting of arrays and objects is refused. Checkpoints need about six levels.
inline constexpr int kMaxJsonNesting = 64;

// OK when no array or object in `text` is nested more than `max_nesting` levels deep (the
// top-level value is level 1); INVALID_ARGUMENT naming the byte offset otherwise. Brackets
// inside strings do not count. Text that is not JSON may pass; the parser refuses it then.
inline absl::Status CheckJsonNesting(std::string_view text, int max_nesting = kMaxJsonNesting) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_nesting) {
        return absl::InvalidArgumentError(fmt::format(
            "arrays and objects nest more than {} levels deep (at byte {})", max_nesting, i));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return absl::OkStatus();
}

// nlohmann's parse error text (`e.what()`) for an error message: the input it repeats after
// "last read:" (the whole bad token, which may be huge or hold control bytes) is quoted and cut.
inline std::string ParseErrorForMessage(std::string_view what) {
  constexpr std::string_view kLastRead = "; last read: '";
  const size_t start = what.find(kLastRead);
  if (start == std::string_view::npos) return std::string(what);
  const size_t token = start + kLastRead.size();
  // The token ends at the last "'" before an optional "; expected ..." tail.
  size_t end = what.rfind("'; expected ");
  if (end == std::string_view::npos || end < token) {
    end = what.back() == '\'' ? what.size() - 1 : what.size();
  }
  const std::string_view tail = end < what.size() ? what.substr(end + 1) : std::string_view();
  return fmt::format("{}; last read: {}{}", what.substr(0, start),
                     QuoteForMessage(what.substr(token, end - token)), tail);
}

// `j` for an error message, never longer than about kMaxQuotedBytes: a string as
// QuoteForMessage() shows it, any other value as compact ASCII-only JSON, cut when longer.
// `j` must come from a parse checked by CheckJsonNesting (dump() recurses).
template <typename Json>
std::string JsonForMessage(const Json& j) {
  if (j.is_string()) return QuoteForMessage(j.template get_ref<const typename Json::string_t&>());
  const std::string text = j.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  if (text.size() <= kMaxQuotedBytes) return text;
  return fmt::format("{}...({} bytes)", std::string_view(text).substr(0, kMaxQuotedBytes),
                     text.size());
}

}  // namespace topologyd::state
