// topoctl simulate [--input FILE.xml | --synthetic DESC] --config FILE WORKLOAD...: what-if
// admission of a whole workload on a machine, once per variant of the node configuration
// (--compare), side by side: pods admitted and rejected (per reason), how well containers are
// aligned, what is left free and stranded, how fast topologyd decided and how many merge
// combinations kubelet would have enumerated (docs/simulate.md).
//
// Every decision is the daemon's own: lib/simulate drives a ledger::Ledger, the engine's
// record of the node, with Admit and Release. Without --input or --synthetic the machine is
// the running daemon's (GetTopology); the configuration is always --config (its `topology:`
// key is ignored in favour of the machine given here).
//
// Output: a table (default), the JSON document (or the same as YAML) or one self-contained
// HTML file (-o, given before or after `simulate`). Exit 0
// when the simulation ran, 1 when an input was refused, 2 on bad usage.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

#include "lib/admission/node_policy.h"
#include "lib/common/absl_fmt.h"
#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/rpc/topology_proto.h"
#include "lib/simulate/report.h"
#include "lib/simulate/run.h"
#include "lib/simulate/workload.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_simulate_inputs.h"

namespace topoctl {
namespace {

namespace simulate = topologyd::simulate;
namespace topo = topologyd::topology;

struct SimulateFlags {
  std::vector<std::string> workload;
  MachineFlags machine;
  std::string config;
  int repeat = 1;
  std::string order = "given";
  uint64_t seed = 1;
  int release_after = 0;  // 0 = pods stay
  std::vector<std::string> compare;
  double ns_per_combination = simulate::kKubeletNsPerCombination;
};

int SimulateFail(int code, const std::string& message) {
  std::cerr << "topoctl: simulate: " << message << "\n";
  return code;
}

absl::StatusOr<topo::Topology> SimulatedMachine(const SimulateFlags& flags, const GlobalOptions& g,
                                                std::string& described) {
  if (flags.machine.given()) {
    const topo::TopologySource source = flags.machine.Source();
    described = topo::DescribeSource(source);
    return topo::LoadTopology(source);
  }
  described = "the machine of the daemon at " + g.socket;
  auto stub = ConnectToDaemon(g.socket);
  topologyd::v1::GetTopologyResponse response;
  grpc::Status s = stub->GetTopology(CallContext().get(), {}, &response);
  if (!s.ok()) {
    ReportRpcError("simulate", s, g.socket);
    return absl::UnavailableError("no machine: give --input or --synthetic, or start the daemon");
  }
  return topologyd::rpc::TopologyFromProto(response.topology());
}

void PrintSimulateTable(const simulate::Report& report) {
  std::cout << "Machine: " << report.machine << " (" << report.numa_nodes << " NUMA nodes, "
            << report.cpus << " CPUs); " << report.arrivals << " arrivals\n\n";
  const simulate::SummaryTable summary = simulate::Summary(report);
  std::cout << RenderTable(summary.header, summary.rows);
  for (const std::string& w : simulate::SlowAdmissionWarnings(report)) {
    std::cout << "warning: " << w << "\n";
  }
}

int RunSimulate(const SimulateFlags& flags, const GlobalOptions& globals) {
  using namespace topologyd;
  if (flags.release_after < 0) return SimulateFail(kExitUsage, "--release-after must be 0 or more");
  if (flags.ns_per_combination <= 0) {
    return SimulateFail(kExitUsage, "--ns-per-combination must be above 0");
  }
  absl::StatusOr<config::Config> base = config::LoadConfigFile(flags.config);
  if (!base.ok()) return SimulateFail(kExitRefused, std::string(base.status().message()));
  absl::StatusOr<std::vector<SimulateVariant>> variants =
      BuildVariants(*base, std::filesystem::path(flags.config).filename().string(), flags.compare);
  if (!variants.ok()) return SimulateFail(kExitUsage, std::string(variants.status().message()));

  absl::StatusOr<std::vector<pod::Pod>> templates =
      LoadWorkload(flags.workload, base->limits.containers_per_pod);
  if (!templates.ok()) return SimulateFail(kExitRefused, std::string(templates.status().message()));
  simulate::WorkloadOptions workload;
  workload.repeat = flags.repeat;
  workload.order = flags.order == "shuffle" ? simulate::Order::kShuffle : simulate::Order::kGiven;
  workload.seed = flags.seed;
  if (flags.release_after > 0) workload.release_after = flags.release_after;
  absl::StatusOr<std::vector<simulate::Arrival>> arrivals =
      simulate::BuildArrivals(*templates, workload);
  if (!arrivals.ok()) return SimulateFail(kExitRefused, std::string(arrivals.status().message()));

  simulate::Report report;
  absl::StatusOr<topo::Topology> machine = SimulatedMachine(flags, globals, report.machine);
  if (!machine.ok()) return SimulateFail(kExitRefused, std::string(machine.status().message()));
  report.numa_nodes = static_cast<int>(machine->numa_nodes.size());
  report.cpus = static_cast<int>(machine->cpus.size());
  report.arrivals = arrivals->size();
  report.options.ns_per_combination = flags.ns_per_combination;

  // Every variant's policy first: a bad one refuses the run before anything is simulated.
  std::vector<std::shared_ptr<const admission::NodePolicy>> policies;
  for (const SimulateVariant& v : *variants) {
    absl::StatusOr<admission::NodePolicy> policy = config::BuildNodePolicy(v.config, *machine);
    if (!policy.ok()) {
      return SimulateFail(kExitRefused,
                          "variant " + v.name + ": " + std::string(policy.status().message()));
    }
    policies.push_back(std::make_shared<const admission::NodePolicy>(*std::move(policy)));
  }
  for (size_t i = 0; i < variants->size(); ++i) {
    absl::StatusOr<simulate::RunResult> run =
        simulate::Simulate(policies[i], *arrivals, report.options);
    if (!run.ok()) {
      return SimulateFail(kExitRefused, "variant " + (*variants)[i].name + ": " +
                                            std::string(run.status().message()));
    }
    report.variants.push_back({(*variants)[i].name, *std::move(run)});
  }

  const std::string& output = globals.output;
  if (output == "html") {
    std::cout << simulate::ReportHtml(report);
  } else if (output == "json" || output == "yaml") {
    PrintDocument(simulate::ReportJson(report),
                  output == "yaml" ? OutputFormat::kYaml : OutputFormat::kJson);
  } else {
    PrintSimulateTable(report);
  }
  return kExitOk;
}

void InstallSimulate(CLI::App& root, CommandContext& context) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = root.add_subcommand(
      "simulate", "what-if: admit a whole workload offline, once per configuration variant");
  cmd->add_option("workload", flags->workload,
                  "Pod manifest files (YAML streams allowed) or directories of them")
      ->required();
  AddMachineFlags(cmd, &flags->machine, "of the machine (default: the daemon's)");
  cmd->add_option("--config", flags->config, "topologyd config file of the node (daemon schema)")
      ->required();
  cmd->add_option("--repeat", flags->repeat, "admit every manifest this many times")
      ->capture_default_str();
  cmd->add_option("--order", flags->order, "arrival order")
      ->check(CLI::IsMember({"given", "shuffle"}))
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed, "seed of --order shuffle")->capture_default_str();
  cmd->add_option("--release-after", flags->release_after,
                  "release every pod after this many later arrivals (0: never); the pod "
                  "annotation topologyd.io/simulate-lifetime overrides it");
  cmd->add_option("--compare", flags->compare,
                  "one axis of variants: policy=A,B | scope=A,B | option=NAME=VALUE[+...],- | "
                  "config=FILE,FILE (repeat for a cross product)");
  cmd->add_option("--ns-per-combination", flags->ns_per_combination,
                  "cost of one combination of kubelet's merge, nanoseconds")
      ->capture_default_str();
  cmd->callback([flags, &context] {
    context.formats = {"table", "json", "yaml", "html"};
    context.action = [flags, &context] { return RunSimulate(*flags, *context.globals); };
  });
}

}  // namespace
}  // namespace topoctl

TOPOCTL_REGISTER_COMMAND(topoctl::InstallSimulate);
