// topoctl explain -f POD.yaml|json --topology FILE.xml --config FILE.yaml: what admission
// would decide for a Kubernetes Pod manifest, and why — every provider's hints per resource,
// the merge, the decision and the allocation it would make — computed by the same library
// call the daemon makes (lib/admission Explain), with no state change anywhere.
//
// Offline form: the node is described by an hwloc XML file and a topologyd config file
// (its `topology:` key is ignored in favour of --topology) and holds no other pods. The
// online form (neither flag) asks the running daemon, against its current allocations
// (support_explain_online.h); giving only one of the two flags is bad usage.
//
// Output: a readable report by default; --output json|yaml prints ARCHITECTURE.md 3.4's
// document with "hints" and "merged" (lib/admission/admission_json.h). Exit 0 when the pod
// would be admitted, 1 when it would be rejected (the document is still printed; the reason
// goes to stderr) or when the inputs are refused, 2 on bad usage.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "lib/admission/admission.h"
#include "lib/admission/admission_json.h"
#include "lib/admission/hint_text.h"
#include "lib/admission/node_policy.h"
#include "lib/config/config_loader.h"
#include "lib/pod/pod_manifest.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_explain_online.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

namespace admission = topologyd::admission;

struct ExplainFlags {
  std::string pod_file;
  std::string topology;
  std::string config;
};

int Fail(int code, const std::string& message) {
  std::cerr << "topoctl explain: " << message << "\n";
  return code;
}

bool ReadFile(const std::string& path, std::string& text) {
  std::ostringstream buf;
  if (path == "-") {
    buf << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    buf << in.rdbuf();
  }
  text = buf.str();
  return true;
}

std::string Ids(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

// The report for people: per merge the providers' hints, the merged hint and the decision;
// then the decision and the allocation.
void PrintTable(const admission::NodePolicy& node, const topologyd::pod::Pod& pod,
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
        rows.push_back({p.provider, resource, admission::HintListText(list, node.numa_ids, 8)});
      }
    }
    std::cout << RenderTable({"PROVIDER", "RESOURCE", "HINTS"}, rows);
    std::cout << "Merged: " << admission::HintText(step.merged.hint, node.numa_ids) << " -> "
              << (step.merged.admit ? "admit" : "reject") << "\n";
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
    rows.push_back({c.name + (c.init ? " (init)" : ""), c.cpus.ToString(),
                    c.exclusive ? "yes" : "no (shared pool)", Ids(c.numa_affinity),
                    Ids(c.memory_numa), devices});
  }
  std::cout << RenderTable({"CONTAINER", "CPUS", "EXCLUSIVE", "NUMA", "MEMORY NUMA", "DEVICES"},
                           rows);
}

int RunExplain(const ExplainFlags& flags, const GlobalOptions& globals) {
  using namespace topologyd;
  if (flags.topology.empty() && flags.config.empty()) {
    return RunOnlineExplain(globals, flags.pod_file);
  }
  if (flags.topology.empty() || flags.config.empty()) {
    return Fail(kExitUsage,
                "the offline form needs both --topology FILE.xml and --config FILE.yaml; "
                "give neither to ask the running daemon");
  }
  std::string text;
  if (!ReadFile(flags.pod_file, text)) return Fail(kExitRefused, "cannot read " + flags.pod_file);
  absl::StatusOr<pod::Pod> pod = pod::ParsePodManifest(text);
  if (!pod.ok()) {
    return Fail(kExitRefused, flags.pod_file + ": " + std::string(pod.status().message()));
  }
  if (pod->uid.empty()) pod->uid = "topoctl-explain";  // admission keys state by uid

  absl::StatusOr<config::Config> config = config::LoadConfigFile(flags.config);
  if (!config.ok()) return Fail(kExitRefused, std::string(config.status().message()));
  absl::StatusOr<topology::Topology> machine =
      topology::LoadTopology(topology::TopologySource::Xml(flags.topology));
  if (!machine.ok()) return Fail(kExitRefused, std::string(machine.status().message()));
  absl::StatusOr<admission::NodePolicy> node = admission::BuildNodePolicy(*config, *machine);
  if (!node.ok()) {
    return Fail(kExitRefused, flags.config + ": " + std::string(node.status().message()));
  }

  absl::StatusOr<admission::AdmissionResult> result =
      admission::Explain(*node, node->empty_state, *pod);
  if (!result.ok()) return Fail(kExitRefused, std::string(result.status().message()));

  if (globals.format() == OutputFormat::kTable) {
    PrintTable(*node, *pod, *result);
  } else {
    PrintDocument(admission::AdmissionResultToJson(*node, *result, /*with_explanation=*/true),
                  globals.format());
  }
  if (!result->admitted) {
    std::cerr << "topoctl explain: the pod would be rejected: " << result->reason << ": "
              << result->message << "\n";
    return kExitRefused;
  }
  return kExitOk;
}

void InstallExplain(CLI::App& root, CommandContext& context) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd = root.add_subcommand(
      "explain", "why a pod would be admitted or rejected: hints, merge, decision, allocation");
  cmd->add_option("-f,--filename", flags->pod_file, "Pod manifest (YAML or JSON), or - for stdin")
      ->required();
  cmd->add_option("--topology", flags->topology, "offline: hwloc XML file of the node");
  cmd->add_option("--config", flags->config, "offline: topologyd config file of the node");
  cmd->callback([flags, &context] {
    context.action = [flags, &context] { return RunExplain(*flags, *context.globals); };
  });
}

}  // namespace
}  // namespace topoctl

TOPOCTL_REGISTER_COMMAND(topoctl::InstallExplain);
