// A JSON document (a NodeResourceTopology object from nrt_json.h) as block YAML, for
// `topoctl nrt -o yaml` and the daemon's NRT file. Every string value is double-quoted (keys are
// plain), so that no quantity ("16") or name reads back as a number or a boolean.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace topologyd::nrt {

// `doc` as YAML text, ending in a newline.
std::string YamlText(const nlohmann::json& doc);

}  // namespace topologyd::nrt
