#include "tools/topoctl/support_output.h"

#include <algorithm>
#include <iostream>

#include "lib/json_yaml/json_yaml.h"

namespace topoctl {

OutputFormat GlobalOptions::format() const {
  if (output == "json") return OutputFormat::kJson;
  if (output == "yaml") return OutputFormat::kYaml;
  return OutputFormat::kTable;
}

std::string JsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string RenderDocument(const nlohmann::json& doc, OutputFormat format) {
  if (format == OutputFormat::kYaml) {
    return topologyd::YamlText(doc);
  }
  return JsonText(doc, 2);
}

void PrintDocument(const nlohmann::json& doc, OutputFormat format) {
  std::cout << RenderDocument(doc, format) << "\n";
}

void PrintResult(const nlohmann::json& doc, OutputFormat format,
                 const std::function<void(const nlohmann::json&)>& print_table) {
  if (format == OutputFormat::kTable) {
    print_table(doc);
  } else {
    PrintDocument(doc, format);
  }
}

std::string IdList(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header);
  for (const auto& row : rows) emit(row);
  return out;
}

}  // namespace topoctl
