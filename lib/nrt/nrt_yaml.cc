#include "lib/nrt/nrt_yaml.h"

#include "yaml-cpp/yaml.h"

namespace topologyd::nrt {
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
    out << j.dump();
  }
}

}  // namespace

std::string YamlText(const nlohmann::json& doc) {
  YAML::Emitter out;
  EmitYaml(doc, out);
  return std::string(out.c_str()) + "\n";
}

}  // namespace topologyd::nrt
