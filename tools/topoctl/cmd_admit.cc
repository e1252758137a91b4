// topoctl admit -f POD: asks the daemon to admit a pod (docs/cli.md, `admit`). Prints
// the decision (that page's JSON, YAML or a table) on stdout; exits 0 when admitted, 1 when refused
// (reason and message also on stderr) or when the request failed.
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"

#include "lib/common/absl_fmt.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_pods.h"

namespace topoctl {
namespace {

int RunAdmit(const GlobalOptions& g, const std::string& pod_file) {
  auto pod = LoadPodRequest(pod_file);
  if (!pod.ok()) {
    std::cerr << "topoctl: admit: " << pod.status().message() << "\n";
    return kExitRefused;
  }
  topologyd::v1::AdmitRequest request;
  *request.mutable_pod() = *std::move(pod);
  topologyd::v1::AdmitResponse response;
  auto stub = ConnectToDaemon(g.socket);
  grpc::Status s = stub->Admit(CallContext().get(), request, &response);
  if (!s.ok()) return ReportRpcError("admit", s, g.socket);

  nlohmann::json doc = DecisionToJson(response);
  PrintResult(doc, g.format(), PrintDecisionTable);
  if (!response.admitted()) {
    std::cerr << "topoctl: admit: refused: " << response.reason() << ": " << response.message()
              << "\n";
    return kExitRefused;
  }
  return kExitOk;
}

void InstallAdmit(CLI::App& root, CommandContext& ctx) {
  auto pod_file = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "admit", "admit a pod: reserve CPUs, memory nodes and devices for its containers");
  cmd->add_option("-f,--filename", *pod_file, "Pod manifest, YAML or JSON (- for stdin)")
      ->required();
  cmd->callback([&ctx, pod_file] {
    ctx.action = [&ctx, pod_file] { return RunAdmit(*ctx.globals, *pod_file); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallAdmit);

}  // namespace
}  // namespace topoctl
