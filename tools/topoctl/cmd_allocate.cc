// topoctl allocate --pod UID --container NAME --container-id ID [--cgroup PATH]: binds an
// admitted container to its runtime identity and prints what to pin it to: the allocation
// of docs/cli.md (`admit`) with "container_id" and "cgroup".
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_pods.h"

namespace topoctl {
namespace {

struct AllocateOptions {
  std::string pod;
  std::string container;
  std::string container_id;
  std::string cgroup;
};

int RunAllocate(const GlobalOptions& g, const AllocateOptions& o) {
  topologyd::v1::AllocateRequest request;
  request.set_pod_uid(o.pod);
  request.set_container_name(o.container);
  request.set_container_id(o.container_id);
  request.set_cgroup(o.cgroup);
  topologyd::v1::AllocateResponse response;
  auto stub = ConnectToDaemon(g.socket);
  grpc::Status s = stub->Allocate(CallContext().get(), request, &response);
  if (!s.ok()) return ReportRpcError("allocate", s, g.socket);

  nlohmann::json doc = AllocationToJson(response.container(), /*with_binding=*/true);
  if (g.format() == OutputFormat::kTable) {
    std::vector<std::string> cells = AllocationCells(doc);
    std::vector<std::vector<std::string>> rows = {
        {"container", doc["name"].get<std::string>()},
        {"container id", doc["container_id"].get<std::string>()},
        {"cgroup", doc["cgroup"].get<std::string>()},
        {"cpus", cells[0]},
        {"exclusive", cells[1]},
        {"numa affinity", cells[2]},
        {"memory nodes", cells[3]},
        {"devices", cells[4]},
    };
    std::cout << RenderTable({"FIELD", "VALUE"}, rows);
  } else {
    PrintDocument(doc, g.format());
  }
  return kExitOk;
}

void InstallAllocate(CLI::App& root, CommandContext& ctx) {
  auto options = std::make_shared<AllocateOptions>();
  CLI::App* cmd = root.add_subcommand(
      "allocate", "bind an admitted container to its container id and cgroup; print its pinning");
  cmd->add_option("--pod", options->pod, "pod uid")->required();
  cmd->add_option("--container", options->container, "container name")->required();
  cmd->add_option("--container-id", options->container_id, "runtime container id")->required();
  cmd->add_option("--cgroup", options->cgroup,
                  "cgroup path relative to the configured cgroup root (default: derived by the "
                  "daemon from the pod and container id)");
  cmd->callback([&ctx, options] {
    ctx.action = [&ctx, options] { return RunAllocate(*ctx.globals, *options); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallAllocate);

}  // namespace
}  // namespace topoctl
