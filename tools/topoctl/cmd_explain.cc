// topoctl explain -f POD.yaml|json --input FILE.xml --config FILE.yaml: what admission
// would decide for a Kubernetes Pod manifest, and why — every provider's hints per resource,
// the merge, the decision and the allocation it would make — computed by the same library
// call the daemon makes (lib/admission Explain), with no state change anywhere.
//
// Offline form: the node is described by an hwloc XML file (or a synthetic description) and a
// topologyd config file (its `topology:` key is ignored in favour of --input) and holds no other
// pods. The online form (neither flag) asks the running daemon, against its current allocations
// (support_explain_online.h); giving only one of the two flags is bad usage.
//
// Output: a readable report by default; --output json|yaml prints the admit
// document (docs/cli.md) with "hints" and "merged" (lib/admission/admission_json.h). Exit 0 when
// the pod would be admitted, 1 when it would be rejected (the document is still printed; the reason
// goes to stderr) or when the inputs are refused, 2 on bad usage.
#include <iostream>
#include <memory>
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
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_explain_online.h"
#include "tools/topoctl/support_explain_table.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

namespace admission = topologyd::admission;

struct ExplainFlags {
  std::string pod_file;
  MachineFlags machine;
  std::string config;
};

int ExplainFail(int code, const std::string& message) {
  return topoctl::Fail("explain", code, message);
}

int RunExplain(const ExplainFlags& flags, const GlobalOptions& globals) {
  using namespace topologyd;
  if (!flags.machine.given() && flags.config.empty()) {
    return RunOnlineExplain(globals, flags.pod_file);
  }
  if (!flags.machine.given() || flags.config.empty()) {
    return ExplainFail(
        kExitUsage,
        "the offline form needs both --input FILE.xml (or --synthetic DESC) and --config "
        "FILE.yaml; give neither to ask the running daemon");
  }
  absl::StatusOr<config::Config> config = config::LoadConfigFile(flags.config);
  if (!config.ok()) return ExplainFail(kExitRefused, std::string(config.status().message()));
  absl::StatusOr<std::string> text = ReadInputFile(flags.pod_file, "a Pod manifest");
  if (!text.ok()) return ExplainFail(kExitRefused, std::string(text.status().message()));
  // Bounded as the daemon on this configuration would bound it.
  absl::StatusOr<pod::Pod> pod = pod::ParsePodManifest(*text, config->limits.containers_per_pod);
  if (!pod.ok()) {
    const std::string name = flags.pod_file == "-" ? "<stdin>" : flags.pod_file;
    return ExplainFail(kExitRefused, name + ": " + std::string(pod.status().message()));
  }
  if (pod->uid.empty()) pod->uid = "topoctl-explain";  // admission keys state by uid

  absl::StatusOr<topology::Topology> machine = topology::LoadTopology(flags.machine.Source());
  if (!machine.ok()) return ExplainFail(kExitRefused, std::string(machine.status().message()));
  absl::StatusOr<admission::NodePolicy> node = config::BuildNodePolicy(*config, *machine);
  if (!node.ok()) {
    return ExplainFail(
        kExitRefused,
        std::string(config::LocateKeyErrors(*config, node.status(), flags.config).message()));
  }

  absl::StatusOr<admission::AdmissionResult> result =
      admission::Explain(*node, node->empty_state, *pod);
  if (!result.ok()) return ExplainFail(kExitRefused, std::string(result.status().message()));

  if (globals.format() == OutputFormat::kTable) {
    ContainerMarks marks;
    for (const pod::Container& c : pod->init_containers) {
      marks[c.name] = c.restart_always ? " (sidecar)" : " (init)";
    }
    PrintExplainTable(admission::AdmissionResultToJson(*node, *result, /*with_explanation=*/true),
                      marks);
  } else {
    PrintDocument(admission::AdmissionResultToJson(*node, *result, /*with_explanation=*/true),
                  globals.format());
  }
  if (!result->admitted) {
    return ExplainFail(kExitRefused,
                       "the pod would be refused: " + result->reason + ": " + result->message);
  }
  return kExitOk;
}

void InstallExplain(CLI::App& root, CommandContext& context) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd = root.add_subcommand(
      "explain", "why a pod would be admitted or rejected: hints, merge, decision, allocation");
  cmd->add_option("-f,--filename", flags->pod_file, "Pod manifest (YAML or JSON), or - for stdin")
      ->required();
  AddMachineFlags(cmd, &flags->machine, "of the node (with --config)");
  cmd->add_option("--config", flags->config, "offline: topologyd config file of the node");
  cmd->callback([flags, &context] {
    context.action = [flags, &context] { return RunExplain(*flags, *context.globals); };
  });
}

}  // namespace
}  // namespace topoctl

TOPOCTL_REGISTER_COMMAND(topoctl::InstallExplain);
