// `topoctl topology [--input FILE.xml | --synthetic STR]`: prints the machine topology as
// topologyd models it (ARCHITECTURE.md 3.1). Without a source it discovers this machine.
// --output json prints the contract JSON; yaml prints the same JSON, which is valid YAML.
#include <iostream>
#include <string>

#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_json.h"
#include "tools/topoctl/command.h"

#include "CLI/CLI.hpp"

namespace topoctl {
namespace {

namespace topo = ::topologyd::topology;

struct TopologyOptions {
  std::string input;
  std::string synthetic;
};

int RunTopology(const TopologyOptions& options, OutputFormat format) {
  topo::TopologySource source = topo::TopologySource::Live();
  if (!options.input.empty()) source = topo::TopologySource::Xml(options.input);
  if (!options.synthetic.empty()) source = topo::TopologySource::Synthetic(options.synthetic);
  auto topology = topo::LoadTopology(source);
  if (!topology.ok()) {
    std::cerr << "topoctl topology: " << topology.status().message() << "\n";
    return kExitRefused;
  }
  if (format == OutputFormat::kTable) {
    std::cout << topo::TopologyToTable(*topology);
  } else {
    std::cout << topo::TopologyToJson(*topology).dump(2) << "\n";
  }
  return kExitOk;
}

void InstallTopology(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<TopologyOptions>();
  CLI::App* command = root.add_subcommand(
      "topology", "show the CPU/memory/device topology (live machine, hwloc XML or synthetic)");
  CLI::Option* input = command->add_option("--input", options->input,
                                           "hwloc XML file to read instead of this machine");
  CLI::Option* synthetic =
      command->add_option("--synthetic", options->synthetic,
                          "hwloc synthetic description, e.g. \"pack:2 numa:4 core:8 pu:2\"");
  input->excludes(synthetic);
  command->callback([options, &context] {
    context.action = [options, &context] {
      return RunTopology(*options, context.globals->format());
    };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallTopology);

}  // namespace
}  // namespace topoctl
