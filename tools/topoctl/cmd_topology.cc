// `topoctl topology [--input FILE.xml | --synthetic STR | --live]`: prints the machine
// topology as topologyd models it (docs/cli.md, `topology`). Without a source it asks the daemon
// (GetTopology) for the machine it decides on; --live discovers this machine with hwloc
// instead, without a daemon. Every source gives the same rendering: --output json prints the
// contract JSON, yaml the same document as YAML, svg a picture of the machine.
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/picture/svg.h"
#include "lib/rpc/topology_proto.h"
#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_details_json.h"
#include "lib/topology/topology_json.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

namespace topo = ::topologyd::topology;

struct TopologyOptions {
  std::string input;
  std::string synthetic;
  bool live = false;
  bool details = false;  // JSON/YAML: every CPU's ids too (topology_details_json.h)
};

// The daemon's topology; on failure, the reason has been printed on stderr.
absl::StatusOr<topo::Topology> FetchFromDaemon(const GlobalOptions& g) {
  auto stub = ConnectToDaemon(g.socket);
  topologyd::v1::GetTopologyResponse response;
  grpc::Status s = stub->GetTopology(CallContext().get(), {}, &response);
  if (!s.ok()) {
    ReportRpcError("topology", s, g.socket);
    return absl::UnavailableError(s.error_message());
  }
  auto topology = topologyd::rpc::TopologyFromProto(response.topology());
  if (!topology.ok()) {
    std::cerr << "topoctl: topology: the daemon sent an unreadable topology: "
              << topology.status().message() << "\n";
  }
  return topology;
}

int RunTopology(const TopologyOptions& options, const GlobalOptions& g) {
  absl::StatusOr<topo::Topology> topology;
  if (options.live || !options.input.empty() || !options.synthetic.empty()) {
    topo::TopologySource source = topo::TopologySource::Live();
    if (!options.input.empty()) source = topo::TopologySource::Xml(options.input);
    if (!options.synthetic.empty()) source = topo::TopologySource::Synthetic(options.synthetic);
    topology = topo::LoadTopology(source);
    if (!topology.ok()) {
      std::cerr << "topoctl: topology: " << topology.status().message() << "\n";
      return kExitRefused;
    }
  } else {
    topology = FetchFromDaemon(g);
    if (!topology.ok()) return kExitRefused;
  }
  if (g.output == "svg") {
    std::cout << topologyd::picture::MachineSvg(*topology);
  } else if (g.format() == OutputFormat::kTable) {
    std::cout << topo::TopologyToTable(*topology);
  } else {
    PrintDocument(
        options.details ? topo::TopologyDetailsToJson(*topology) : topo::TopologyToJson(*topology),
        g.format());
  }
  return kExitOk;
}

void InstallTopology(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<TopologyOptions>();
  CLI::App* command = root.add_subcommand(
      "topology",
      "show the CPU/memory/device topology (the daemon's, this machine's, hwloc XML or synthetic)");
  CLI::Option* input = command->add_option("--input", options->input,
                                           "hwloc XML file to read instead of this machine");
  CLI::Option* synthetic =
      command->add_option("--synthetic", options->synthetic,
                          "hwloc synthetic description, e.g. \"pack:2 numa:4 core:8 pu:2\"");
  CLI::Option* live = command->add_flag(
      "--live", options->live, "discover this machine with hwloc instead of asking the daemon");
  // An empty value (an unset shell variable) must not silently mean "ask the daemon".
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NON-EMPTY");
  command->add_flag("--details", options->details,
                    "json/yaml: add every CPU's core, package, die, NUMA and L3 ids "
                    "(cpu_details) and kubelet_test_map");
  input->check(non_empty);
  synthetic->check(non_empty);
  input->excludes(synthetic);
  live->excludes(input);
  live->excludes(synthetic);
  command->callback([options, &context] {
    context.formats = {"table", "json", "yaml", "svg"};
    context.action = [options, &context] { return RunTopology(*options, *context.globals); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallTopology);

}  // namespace
}  // namespace topoctl
