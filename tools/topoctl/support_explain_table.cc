#include "tools/topoctl/support_explain_table.h"

#include <iostream>
#include <string>
#include <vector>

#include "fmt/format.h"

#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

std::string AffinityText(const nlohmann::json& affinity) {
  if (affinity.is_null()) return "any";
  return "[" + (affinity.empty() ? std::string() : IdList(affinity)) + "]";
}

std::string HintListText(const nlohmann::json& list) {
  if (list.is_null()) return "no preference";
  const bool upward = list.is_object();
  const nlohmann::json& hints = upward ? list["hints"] : list;
  if (hints.empty()) return "cannot be satisfied";
  // As many masks as a terminal line holds; long lists (memory hints over many nodes) are cut.
  constexpr size_t kMaxShown = 8;
  std::string out;
  for (size_t i = 0; i < hints.size() && i < kMaxShown; ++i) {
    if (!out.empty()) out += ", ";
    out += AffinityText(hints[i]["affinity"]);
    if (hints[i]["preferred"].get<bool>()) out += " preferred";
  }
  if (hints.size() > kMaxShown) out += fmt::format(" and {} more", hints.size() - kMaxShown);
  if (upward) out += " (or any superset within " + AffinityText(list["universe"]) + ")";
  return out;
}

}  // namespace

void PrintExplainTable(const nlohmann::json& doc, const ContainerMarks& marks) {
  PrintDecisionTable(doc, marks);
  std::cout << "\npolicy " << doc["policy"].get<std::string>() << ", scope "
            << doc["scope"].get<std::string>() << "\n";
  for (const auto& note : doc["notes"]) std::cout << "note: " << note.get<std::string>() << "\n";
  for (size_t i = 0; i < doc["hints"].size(); ++i) {
    const nlohmann::json& step = doc["hints"][i];
    const nlohmann::json& merged = doc["merged"][i];
    std::string heading = "pod";
    if (!step["container"].is_null()) {
      const std::string name = step["container"].get<std::string>();
      const auto mark = marks.find(name);
      heading = "container " + name + (mark == marks.end() ? "" : mark->second);
    }
    std::cout << "\n" << heading << "\n";
    std::vector<std::vector<std::string>> rows;
    for (auto p = step["providers"].begin(); p != step["providers"].end(); ++p) {
      if (p.value().is_null() || p.value().empty()) {
        rows.push_back({p.key(), "-", "no preference"});
        continue;
      }
      for (auto r = p.value().begin(); r != p.value().end(); ++r) {
        rows.push_back({p.key(), r.key(), HintListText(r.value())});
      }
    }
    rows.push_back({"merged", "-",
                    AffinityText(merged["affinity"]) +
                        (merged["preferred"].get<bool>() ? " preferred" : " not preferred") +
                        (merged["admit"].get<bool>() ? "" : ", refused by the topology manager")});
    std::cout << RenderTable({"PROVIDER", "RESOURCE", "HINTS"}, rows);
    if (merged.contains("limit_error")) {
      std::cout << "merge given up: " << merged["limit_error"].get<std::string>() << "\n";
    }
  }
}

}  // namespace topoctl
