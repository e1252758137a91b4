#include "lib/admission/admission_json.h"

#include "lib/admission/hint_text.h"

namespace topologyd::admission {
namespace {

nlohmann::json Affinity(const std::optional<hints::NumaMask>& mask, const hints::NumaIndex& numa) {
  if (!mask.has_value()) return nullptr;
  return numa.Ids(*mask);
}

nlohmann::json HintArray(const std::vector<hints::TopologyHint>& list,
                         const hints::NumaIndex& numa) {
  nlohmann::json out = nlohmann::json::array();
  for (const hints::TopologyHint& h : list) {
    out.push_back({{"affinity", Affinity(h.affinity, numa)}, {"preferred", h.preferred}});
  }
  return out;
}

nlohmann::json Merged(const MergeStep& step, const hints::NumaIndex& numa) {
  nlohmann::json out = {
      {"container", step.container.has_value() ? nlohmann::json(*step.container) : nullptr},
      {"affinity", Affinity(step.merged.hint.affinity, numa)},
      {"preferred", step.merged.hint.preferred},
      {"admit", step.merged.admit}};
  // Only for a merge given up at its limits, so ordinary documents keep their shape.
  if (!step.limit_error.empty()) out["limit_error"] = step.limit_error;
  return out;
}

}  // namespace

nlohmann::json ContainerToJson(const state::ContainerRecord& c) {
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [resource, ids] : c.devices) devices[resource] = ids;
  return {{"name", c.name},
          {"cpus", c.cpus.ToString()},
          {"exclusive", c.exclusive},
          {"numa_affinity", c.numa_affinity},
          {"memory_numa", state::MemoryNodes(c)},
          {"devices", devices}};
}

nlohmann::json ProviderHintsToJson(const hints::ProviderHints& hints,
                                   const hints::NumaIndex& numa) {
  if (!hints.has_value()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [resource, list] : *hints) {
    if (!list.has_value()) {
      out[resource] = nullptr;
    } else if (!list->upward_closed) {
      out[resource] = HintArray(list->hints, numa);
    } else {
      out[resource] = {{"upward_closed", true},
                       {"universe", numa.Ids(list->universe)},
                       {"hints", HintArray(list->hints, numa)}};
    }
  }
  return out;
}

nlohmann::json AdmissionResultToJson(const NodePolicy& node, const AdmissionResult& result,
                                     bool with_explanation) {
  return AdmissionResultToJson(node.numa, result, with_explanation);
}

nlohmann::json AdmissionResultToJson(const hints::NumaIndex& numa, const AdmissionResult& result,
                                     bool with_explanation) {
  nlohmann::json doc = {
      {"admitted", result.admitted}, {"reason", result.reason}, {"message", result.message}};
  nlohmann::json containers = nlohmann::json::array();
  for (const state::ContainerRecord& c : result.containers) {
    containers.push_back(ContainerToJson(c));
  }
  doc["containers"] = containers;
  if (!with_explanation) return doc;
  const Explanation& e = result.explanation;
  doc["policy"] = std::string(hints::PolicyName(e.policy));
  doc["scope"] = std::string(ScopeName(e.scope));
  doc["notes"] = e.notes;
  nlohmann::json hints = nlohmann::json::array();
  nlohmann::json merged = nlohmann::json::array();
  for (const MergeStep& step : e.merges) {
    nlohmann::json providers = nlohmann::json::object();
    for (const ProviderHintsEntry& p : step.providers) {
      providers[p.provider] = ProviderHintsToJson(p.hints, numa);
    }
    hints.push_back(
        {{"container", step.container.has_value() ? nlohmann::json(*step.container) : nullptr},
         {"providers", providers}});
    merged.push_back(Merged(step, numa));
  }
  doc["hints"] = hints;
  doc["merged"] = merged;
  // Only for a pod split over NUMA nodes, so other documents keep their shape.
  if (e.numa_split.has_value()) {
    nlohmann::json cells = nlohmann::json::array();
    for (const NumaCell& cell : e.numa_split->cells) {
      cells.push_back(
          {{"numa_node", cell.numa_node >= 0 ? nlohmann::json(cell.numa_node) : nullptr},
           {"cpus", cell.cpus},
           {"memory", cell.memory},
           {"cpu_set", cell.cpu_set.ToString()}});
    }
    doc["numa_split"] = {{"placed_by_pod", e.numa_split->placed_by_pod}, {"cells", cells}};
  }
  return doc;
}

}  // namespace topologyd::admission
