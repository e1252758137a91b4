// topoctl allocations: every admitted pod's allocation, the reserved CPUs and the shared
// pool (docs/cli.md, `allocations`), as JSON/YAML or one table row per container.
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_pods.h"

namespace topoctl {
namespace {

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

void InstallAllocations(CLI::App& root, CommandContext& ctx) {
  CLI::App* cmd = root.add_subcommand(
      "allocations", "list every admitted pod's allocation, the reserved CPUs and the shared pool");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> int {
      const GlobalOptions& g = *ctx.globals;
      auto stub = ConnectToDaemon(g.socket);
      topologyd::v1::ListAllocationsResponse response;
      grpc::Status s = stub->ListAllocations(CallContext().get(), {}, &response);
      if (!s.ok()) return ReportRpcError("allocations", s, g.socket);
      nlohmann::json doc = AllocationsToJson(response);
      PrintResult(doc, g.format(), PrintAllocationsTable);
      return kExitOk;
    };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallAllocations);

}  // namespace
}  // namespace topoctl
