// topoctl replay --input-case FILE: runs one parity case offline through the daemon's own
// decisions (a ledger::Ledger, as `simulate` does) and prints every decision as JSON, in the
// shape tests/parity/oracle's kubelet-oracle prints for kubelet's managers (docs/cli.md,
// `replay`). FILE "-" reads standard input. Exit 0 when the case ran
// (a refused configuration included: its "setup_error"), 1 when it could not be read or run.
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_replay.h"

namespace topoctl {
namespace {

int RunReplay(const std::string& path, const GlobalOptions& globals) {
  absl::StatusOr<std::string> text = ReadInputFile(path, "a parity case (JSON)");
  if (!text.ok()) return Fail("replay", kExitRefused, std::string(text.status().message()));
  nlohmann::json parity_case = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (parity_case.is_discarded()) {
    return Fail("replay", kExitRefused, (path == "-" ? "<stdin>" : path) + ": not JSON");
  }
  absl::StatusOr<nlohmann::json> result = ReplayCase(parity_case);
  if (!result.ok()) {
    return Fail("replay", kExitRefused, path + ": " + std::string(result.status().message()));
  }
  PrintDocument(
      *result, globals.format() == OutputFormat::kYaml ? OutputFormat::kYaml : OutputFormat::kJson);
  return kExitOk;
}

void InstallReplay(CLI::App& root, CommandContext& context) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "replay",
      "run a parity case (machine, kubelet configuration, pods) offline; print decisions");
  cmd->add_option("--input-case", *path, "the case as JSON (docs/cli.md, replay); - for stdin")
      ->required();
  cmd->callback([path, &context] {
    context.formats = {"json", "yaml"};  // a decision list to compare, not a table
    context.action = [path, &context] { return RunReplay(*path, *context.globals); };
  });
}

}  // namespace
}  // namespace topoctl

TOPOCTL_REGISTER_COMMAND(topoctl::InstallReplay);
