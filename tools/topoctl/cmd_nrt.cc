// `topoctl nrt [--node-name NAME] [--input FILE.xml | --synthetic STR] [--config FILE.yaml]`:
// prints the node's NodeResourceTopology object (topology.node.k8s.io/v1alpha2; docs/cli.md,
// `nrt`). Online it asks the daemon (GetNodeResourceTopology: the object its NRT file holds);
// offline it builds the object of an empty node from an hwloc XML file and a topologyd config file,
// with the same library code. YAML unless `-o json`: the object is a manifest for `kubectl apply
// -f`.
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"

#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/json_yaml/json_yaml.h"
#include "lib/nrt/node_name.h"
#include "lib/nrt/node_resource_topology.h"
#include "lib/nrt/nrt_json.h"
#include "lib/pod/names.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

struct NrtOptions {
  std::string node_name;
  MachineFlags machine;
  std::string config;
};

int NrtFail(int code, const std::string& message) {
  std::cerr << "topoctl: nrt: " << message << "\n";
  return code;
}

// The object of an empty node; nullopt after printing why not.
std::optional<nlohmann::json> BuildNrtOffline(const NrtOptions& options) {
  using namespace topologyd;
  absl::StatusOr<config::Config> config = config::LoadConfigFile(options.config);
  if (!config.ok()) {
    NrtFail(kExitRefused, std::string(config.status().message()));
    return std::nullopt;
  }
  absl::StatusOr<topology::Topology> machine = topology::LoadTopology(options.machine.Source());
  if (!machine.ok()) {
    NrtFail(kExitRefused, std::string(machine.status().message()));
    return std::nullopt;
  }
  absl::StatusOr<admission::NodePolicy> node = config::BuildNodePolicy(*config, *machine);
  if (!node.ok()) {
    NrtFail(kExitRefused,
            std::string(config::LocateKeyErrors(*config, node.status(), options.config).message()));
    return std::nullopt;
  }
  const std::string name =
      nrt::NodeName(options.node_name.empty() ? config->nrt.node_name : options.node_name);
  return nrt::ToJson(nrt::BuildNodeResourceTopology(*node, state::State{}, name));
}

std::optional<nlohmann::json> FetchNrtFromDaemon(const NrtOptions& options,
                                                 const GlobalOptions& g) {
  auto stub = ConnectToDaemon(g.socket);
  topologyd::v1::GetNodeResourceTopologyRequest request;
  request.set_node_name(options.node_name);
  topologyd::v1::GetNodeResourceTopologyResponse response;
  grpc::Status s = stub->GetNodeResourceTopology(CallContext().get(), request, &response);
  if (!s.ok()) {
    ReportRpcError("nrt", s, g.socket);
    return std::nullopt;
  }
  nlohmann::json doc = nlohmann::json::parse(response.object_json(), nullptr, false);
  if (doc.is_discarded()) {
    NrtFail(kExitRefused, "the daemon sent an object that is not JSON");
    return std::nullopt;
  }
  return doc;
}

int RunNrt(const NrtOptions& options, const GlobalOptions& g) {
  if (!options.node_name.empty() && !topologyd::pod::IsDnsSubdomain(options.node_name)) {
    return NrtFail(kExitUsage,
                   "--node-name: not a Kubernetes node name (lower-case letters, "
                   "digits, '-' and '.', starting and ending with a letter or digit)");
  }
  const bool machine_given = options.machine.given();
  if (machine_given != !options.config.empty()) {
    return NrtFail(kExitUsage,
                   "the offline form needs both --input FILE.xml (or --synthetic) and --config "
                   "FILE.yaml; give neither to ask the running daemon");
  }
  std::optional<nlohmann::json> doc =
      machine_given ? BuildNrtOffline(options) : FetchNrtFromDaemon(options, g);
  if (!doc) return kExitRefused;
  if (g.format() == OutputFormat::kJson) {
    std::cout << JsonText(*doc, 2) << "\n";
  } else {
    std::cout << topologyd::YamlText(*doc) << "\n";
  }
  return kExitOk;
}

void InstallNrt(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<NrtOptions>();
  CLI::App* command = root.add_subcommand(
      "nrt", "print the node's NodeResourceTopology object (topology.node.k8s.io/v1alpha2)");
  command->add_option("--node-name", options->node_name,
                      "the object's name (default: nrt.nodeName, else this host's name)");
  AddMachineFlags(command, &options->machine, "of the node (with --config; an empty node)");
  command->add_option("--config", options->config, "offline: topologyd config file of the node");
  command->callback([options, &context] {
    // A manifest for `kubectl apply -f`: YAML unless asked for JSON; no table.
    context.formats = {"yaml", "json"};
    context.action = [options, &context] { return RunNrt(*options, *context.globals); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallNrt);

}  // namespace
}  // namespace topoctl
