// topoctl release --pod UID [--container NAME [--container-id ID]]: releases a pod's
// allocation, or one container's (with --container-id, only while it is bound to that runtime
// container). Prints {"released": true, "state_generation": N}; an unknown pod or container,
// or a container bound to another id, exits 1 with the daemon's message.
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

struct ReleaseOptions {
  std::string pod;
  std::string container;
  std::string container_id;
};

int RunRelease(const GlobalOptions& g, const ReleaseOptions& o) {
  topologyd::v1::ReleaseRequest request;
  request.set_pod_uid(o.pod);
  request.set_container_name(o.container);
  request.set_container_id(o.container_id);
  topologyd::v1::ReleaseResponse response;
  auto stub = ConnectToDaemon(g.socket);
  grpc::Status s = stub->Release(CallContext().get(), request, &response);
  if (!s.ok()) return ReportRpcError("release", s, g.socket);

  nlohmann::json doc = {{"released", true}, {"state_generation", response.state_generation()}};
  if (g.format() == OutputFormat::kTable) {
    std::cout << "released pod " << o.pod;
    if (!o.container.empty()) std::cout << " container " << o.container;
    std::cout << " (state generation " << response.state_generation() << ")\n";
  } else {
    PrintDocument(doc, g.format());
  }
  return kExitOk;
}

void InstallRelease(CLI::App& root, CommandContext& ctx) {
  auto options = std::make_shared<ReleaseOptions>();
  CLI::App* cmd = root.add_subcommand("release", "release a pod's allocation, or one container's");
  // An empty --container (an unset shell variable) would otherwise mean the whole pod.
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NON-EMPTY");
  cmd->add_option("--pod", options->pod, "pod uid")->required()->check(non_empty);
  CLI::Option* container = cmd->add_option("--container", options->container,
                                           "container name (leave it out to release the whole pod)")
                               ->check(non_empty);
  cmd->add_option("--container-id", options->container_id,
                  "release the container only while it is bound to this runtime container id")
      ->check(non_empty)
      ->needs(container);
  cmd->callback([&ctx, options] {
    ctx.action = [&ctx, options] { return RunRelease(*ctx.globals, *options); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallRelease);

}  // namespace
}  // namespace topoctl
