// Text for XML documents: character data and attribute values with markup escaped, and
// whatever XML 1.0 cannot carry (control characters, malformed UTF-8) replaced, so that names
// taken from Pod manifests or a state file can never make the document ill-formed.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace topologyd {

// `text` with & < > " ' as entities, the C0 controls other than tab, newline and carriage
// return as U+FFFD, and each byte of a malformed UTF-8 sequence as U+FFFD.
std::string XmlEscape(std::string_view text);

}  // namespace topologyd
