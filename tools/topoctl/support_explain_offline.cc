#include "tools/topoctl/support_explain_offline.h"

#include <iostream>
#include <string>
#include <vector>

#include "lib/admission/hint_text.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace admission = topologyd::admission;

void PrintOfflineExplainTable(const admission::NodePolicy& node, const topologyd::pod::Pod& pod,
                              const admission::AdmissionResult& r) {
  const admission::Explanation& e = r.explanation;
  std::cout << "Pod " << pod.namespace_name << "/" << pod.name << " (uid " << pod.uid << ")\n";
  std::cout << "Topology manager: policy " << topologyd::hints::PolicyName(e.policy) << ", scope "
            << admission::ScopeName(e.scope) << "\n";
  for (const std::string& note : e.notes) std::cout << "Note: " << note << "\n";
  for (const admission::MergeStep& step : e.merges) {
    std::cout << "\n"
              << (step.container ? "Container \"" + *step.container + "\"" : std::string("Pod"))
              << "\n";
    std::vector<std::vector<std::string>> rows;
    for (const admission::ProviderHintsEntry& p : step.providers) {
      if (!p.hints.has_value() || p.hints->empty()) {
        rows.push_back({p.provider, "-", "no preference"});
        continue;
      }
      for (const auto& [resource, list] : *p.hints) {
        rows.push_back({p.provider, resource, admission::HintListText(list, node.numa, 8)});
      }
    }
    std::cout << RenderTable({"PROVIDER", "RESOURCE", "HINTS"}, rows);
    std::cout << "Merged: " << admission::HintText(step.merged.hint, node.numa) << " -> "
              << (step.merged.admit ? "admit" : "reject") << "\n";
    if (!step.limit_error.empty()) std::cout << "Merge given up: " << step.limit_error << "\n";
  }
  std::cout << "\nDecision: " << (r.admitted ? "ADMITTED" : "REJECTED (" + r.reason + ")") << "\n";
  if (!r.admitted) {
    std::cout << "Message: " << r.message << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const admission::ContainerAllocation& c : r.containers) {
    std::string devices;
    for (const auto& [resource, ids] : c.devices) {
      std::string list;
      for (const std::string& id : ids) list += (list.empty() ? "" : ",") + id;
      devices += (devices.empty() ? "" : " ") + resource + "=" + list;
    }
    const char* kind = c.restartable ? " (sidecar)" : c.init ? " (init)" : "";
    rows.push_back({c.name + kind, c.cpus.ToString(), c.exclusive ? "yes" : "no (shared pool)",
                    IdList(c.numa_affinity), IdList(topologyd::state::MemoryNodes(c)), devices});
  }
  std::cout << RenderTable({"CONTAINER", "CPUS", "EXCLUSIVE", "NUMA", "MEMORY NUMA", "DEVICES"},
                           rows);
}

}  // namespace topoctl
