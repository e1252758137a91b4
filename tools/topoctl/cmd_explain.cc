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
// Output: a readable report by default; --output json|yaml prints the admit
// document (docs/cli.md) with "hints" and "merged" (lib/admission/admission_json.h). Exit 0 when
// the pod would be admitted, 1 when it would be rejected (the document is still printed; the reason
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
#include "lib/admission/node_policy.h"
#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/pod/pod_manifest.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_explain_offline.h"
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
  absl::StatusOr<config::Config> config = config::LoadConfigFile(flags.config);
  if (!config.ok()) return Fail(kExitRefused, std::string(config.status().message()));
  std::string text;
  if (!ReadFile(flags.pod_file, text)) return Fail(kExitRefused, "cannot read " + flags.pod_file);
  // Bounded as the daemon on this configuration would bound it.
  absl::StatusOr<pod::Pod> pod = pod::ParsePodManifest(text, config->limits.containers_per_pod);
  if (!pod.ok()) {
    return Fail(kExitRefused, flags.pod_file + ": " + std::string(pod.status().message()));
  }
  if (pod->uid.empty()) pod->uid = "topoctl-explain";  // admission keys state by uid

  absl::StatusOr<topology::Topology> machine =
      topology::LoadTopology(topology::TopologySource::Xml(flags.topology));
  if (!machine.ok()) return Fail(kExitRefused, std::string(machine.status().message()));
  absl::StatusOr<admission::NodePolicy> node = config::BuildNodePolicy(*config, *machine);
  if (!node.ok()) {
    return Fail(kExitRefused, flags.config + ": " + std::string(node.status().message()));
  }

  absl::StatusOr<admission::AdmissionResult> result =
      admission::Explain(*node, node->empty_state, *pod);
  if (!result.ok()) return Fail(kExitRefused, std::string(result.status().message()));

  if (globals.format() == OutputFormat::kTable) {
    PrintOfflineExplainTable(*node, *pod, *result);
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
