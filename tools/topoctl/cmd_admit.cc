// topoctl admit -f POD: asks the daemon to admit a pod (docs/cli.md, `admit`). Prints
// the decision (that page's JSON, YAML or a table) on stdout; exits 0 when admitted, 1 when refused
// (reason and message also on stderr) or when the request failed.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

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
  const ContainerMarks marks = MarksOf(request.pod());
  PrintResult(doc, g.format(),
              [&marks](const nlohmann::json& decision) { PrintDecisionTable(decision, marks); });
  // Admission is idempotent by uid: a held pod keeps what it holds. Say so when the manifest
  // asks for something else, rather than let "admitted" suggest it was admitted as written.
  if (std::vector<std::string> differences = DifferencesFromHeld(request.pod(), response);
      !differences.empty()) {
    std::cerr << "topoctl: admit: pod " << request.pod().uid()
              << " was already admitted with another spec and keeps its allocation (release it "
                 "to admit this one):\n";
    for (const std::string& d : differences) std::cerr << "  " << d << "\n";
  }
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
