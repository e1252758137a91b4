// A JSON document as block YAML. Every string value is double-quoted (keys are plain), so that
// no CPU list ("0-3"), quantity ("16") or name reads back as a number, a boolean or null.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace topologyd {

// `doc` as YAML text, without a final newline. Invalid UTF-8 in strings becomes U+FFFD.
std::string YamlText(const nlohmann::json& doc);

}  // namespace topologyd
