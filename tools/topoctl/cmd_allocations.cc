// topoctl allocations: every admitted pod's allocation, the reserved CPUs and the shared
// pool (docs/cli.md, `allocations`), as JSON/YAML, one table row per container, or a picture
// of the machine (-o svg).
//
// Offline form (--config, with --state and --input or --synthetic): the node the daemon would
// restore from that configuration and state file — an empty node without --state — listed by the
// daemon's own code (ledger::Ledger::Restore, then the reply ListAllocations sends), so both
// forms print the same for the same node.
#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"

#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/ledger/ledger.h"
#include "lib/picture/svg.h"
#include "lib/rpc/admission_proto.h"
#include "lib/rpc/topology_proto.h"
#include "lib/state/checkpoint_codec.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_picture.h"
#include "tools/topoctl/support_pods.h"

namespace topoctl {
namespace {

namespace topo = topologyd::topology;

struct AllocationsFlags {
  std::string config;
  std::string state;
  MachineFlags machine;
};

// What the command shows: the listing and, for -o svg, the machine it is on.
struct ListedNode {
  topologyd::v1::ListAllocationsResponse allocations;
  topo::Topology machine;
};

int FailAllocations(const std::string& message, int code = kExitRefused) {
  return Fail("allocations", code, message);
}

nlohmann::json AllocationsToJson(const topologyd::v1::ListAllocationsResponse& r) {
  nlohmann::json pods = nlohmann::json::array();
  for (const auto& p : r.pods()) {
    nlohmann::json containers = nlohmann::json::array();
    for (const auto& c : p.containers()) {
      containers.push_back(AllocationToJson(c, /*with_binding=*/true));
    }
    pods.push_back({{"uid", p.uid()},
                    {"namespace", p.namespace_()},
                    {"name", p.name()},
                    {"containers", containers}});
  }
  return {{"reserved", r.reserved()}, {"shared_pool", r.shared_pool()}, {"pods", pods}};
}

void PrintAllocationsTable(const nlohmann::json& doc) {
  auto list = [](const nlohmann::json& s) {
    const std::string text = s.get<std::string>();
    return text.empty() ? std::string("-") : text;
  };
  std::cout << "reserved CPUs: " << list(doc["reserved"]) << "\n"
            << "shared pool:   " << list(doc["shared_pool"]) << "\n";
  if (doc["pods"].empty()) {
    std::cout << "no pods admitted\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : doc["pods"]) {
    const std::string pod = p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>();
    for (const auto& c : p["containers"]) {
      std::vector<std::string> cells = AllocationCells(c);
      const std::string cgroup = c["cgroup"].get<std::string>();
      rows.push_back({pod, c["name"].get<std::string>(), cells[0], cells[1], cells[2], cells[3],
                      cells[4], cgroup.empty() ? "-" : cgroup});
    }
  }
  std::cout << "\n"
            << RenderTable(
                   {"POD", "CONTAINER", "CPUS", "EXCLUSIVE", "NUMA", "MEMS", "DEVICES", "CGROUP"},
                   rows);
}

// The daemon's listing, and its machine when `with_machine`; on failure the reason has been
// printed and the exit code is returned instead.
std::variant<ListedNode, int> FetchListedNode(const GlobalOptions& g, bool with_machine) {
  auto stub = ConnectToDaemon(g.socket);
  ListedNode node;
  grpc::Status s = stub->ListAllocations(CallContext().get(), {}, &node.allocations);
  if (!s.ok()) return ReportRpcError("allocations", s, g.socket);
  if (!with_machine) return node;
  topologyd::v1::GetTopologyResponse topology;
  s = stub->GetTopology(CallContext().get(), {}, &topology);
  if (!s.ok()) return ReportRpcError("allocations", s, g.socket);
  absl::StatusOr<topo::Topology> machine = topologyd::rpc::TopologyFromProto(topology.topology());
  if (!machine.ok()) {
    return FailAllocations("the daemon sent an unreadable topology: " +
                           std::string(machine.status().message()));
  }
  node.machine = *std::move(machine);
  return node;
}

// The machine the daemon on `config` would decide on (as daemon/daemon.cc picks it).
topo::TopologySource ConfiguredSource(const topologyd::config::Config& config) {
  using Kind = topologyd::config::TopologySourceConfig::Kind;
  switch (config.topology.source) {
    case Kind::kXml:
      return topo::TopologySource::Xml(config.topology.path);
    case Kind::kSynthetic:
      return topo::TopologySource::Synthetic(config.topology.description);
    case Kind::kLive:
      break;
  }
  return topo::TopologySource::Live();
}

absl::StatusOr<topologyd::state::State> ReadStateFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadInputFile(path, "a topologyd state file");
  if (!bytes.ok()) return bytes.status();
  return topologyd::state::DecodeState(*bytes, path);
}

std::variant<ListedNode, int> BuildOfflineNode(const AllocationsFlags& flags) {
  using namespace topologyd;
  absl::StatusOr<config::Config> config = config::LoadConfigFile(flags.config);
  if (!config.ok()) return FailAllocations(std::string(config.status().message()));
  const topo::TopologySource source =
      flags.machine.given() ? flags.machine.Source() : ConfiguredSource(*config);
  absl::StatusOr<topo::Topology> machine = topo::LoadTopology(source);
  if (!machine.ok()) return FailAllocations(std::string(machine.status().message()));
  absl::StatusOr<admission::NodePolicy> policy = config::BuildNodePolicy(*config, *machine);
  if (!policy.ok())
    return FailAllocations(flags.config + ": " + std::string(policy.status().message()));
  absl::StatusOr<state::State> records = state::State{};
  if (!flags.state.empty()) records = ReadStateFile(flags.state);
  if (!records.ok()) return FailAllocations(std::string(records.status().message()));
  absl::StatusOr<ledger::Ledger> ledger =
      ledger::Ledger::Restore(std::make_shared<const admission::NodePolicy>(*std::move(policy)),
                              *std::move(records), flags.state, flags.config);
  if (!ledger.ok()) return FailAllocations(std::string(ledger.status().message()));
  ListedNode node;
  rpc::AllocationsToProto(ledger->List(), config->feature_gates, &node.allocations);
  node.machine = *std::move(machine);
  return node;
}

int RunAllocations(const AllocationsFlags& flags, const GlobalOptions& g) {
  const bool svg = g.output == "svg";
  if (flags.machine.given() && flags.config.empty()) {
    return FailAllocations("--input and --synthetic need --config (the offline form)", kExitUsage);
  }
  std::variant<ListedNode, int> node =
      flags.config.empty() ? FetchListedNode(g, svg) : BuildOfflineNode(flags);
  if (const int* code = std::get_if<int>(&node)) return *code;
  const ListedNode& got = std::get<ListedNode>(node);
  if (svg) {
    absl::StatusOr<topologyd::picture::AllocationsDrawing> drawing =
        DrawingOfAllocations(got.allocations);
    if (!drawing.ok()) return FailAllocations(std::string(drawing.status().message()));
    std::cout << topologyd::picture::MachineSvg(got.machine, &*drawing);
    return kExitOk;
  }
  PrintResult(AllocationsToJson(got.allocations), g.format(), PrintAllocationsTable);
  return kExitOk;
}

void InstallAllocations(CLI::App& root, CommandContext& ctx) {
  auto flags = std::make_shared<AllocationsFlags>();
  CLI::App* cmd = root.add_subcommand(
      "allocations", "list every admitted pod's allocation, the reserved CPUs and the shared pool");
  // An empty value (an unset shell variable) must not silently mean "ask the daemon".
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NON-EMPTY");
  CLI::Option* config = cmd->add_option(
      "--config", flags->config, "offline: the node's topologyd config file (no daemon asked)");
  config->check(non_empty);
  cmd->add_option("--state", flags->state,
                  "offline: the node's state file (state.json); without it, an empty node")
      ->check(non_empty)
      ->needs(config);
  AddMachineFlags(cmd, &flags->machine, "of the node instead of the config's topology");
  cmd->callback([flags, &ctx] {
    ctx.formats = {"table", "json", "yaml", "svg"};
    ctx.action = [flags, &ctx] { return RunAllocations(*flags, *ctx.globals); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallAllocations);

}  // namespace
}  // namespace topoctl
