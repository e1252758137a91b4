#include "lib/json_yaml/json_yaml.h"

#include "yaml-cpp/yaml.h"

namespace topologyd {
namespace {

void EmitYaml(const nlohmann::json& j, YAML::Emitter& out) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      EmitYaml(it.value(), out);
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : j) EmitYaml(item, out);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    out << YAML::DoubleQuoted << j.get<std::string>();
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

std::string YamlText(const nlohmann::json& doc) {
  YAML::Emitter out;
  EmitYaml(doc, out);
  return out.c_str();
}

}  // namespace topologyd
