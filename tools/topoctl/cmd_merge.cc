// topoctl merge --input HINTS.json: kubelet's Topology Manager merge, offline.
// Reads a merge request (lib/hints/merge_json.h), prints the merged hint and the admit
// decision: a table by default, {"affinity": [ids] | null, "preferred": bool, "admit": bool}
// with --output json. Exit 1 when the request is refused (bad JSON, unknown policy, ids not
// in numa_nodes, more than 64 nodes, ...) or the merge exceeds the daemon's merge limits
// (hints::MergeLimits; --unlimited lifts them), 2 on bad usage.
#include <iostream>
#include <string>

#include "nlohmann/json.hpp"

#include "lib/hints/merge.h"
#include "lib/hints/merge_json.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

int RunMerge(const GlobalOptions& globals, const std::string& path, bool unlimited) {
  absl::StatusOr<std::string> text = ReadInputFile(path, "a merge request (JSON)");
  if (!text.ok()) return Fail("merge", kExitRefused, std::string(text.status().message()));
  absl::StatusOr<topologyd::hints::MergeRequest> req = topologyd::hints::ParseMergeRequest(*text);
  if (!req.ok()) {
    return Fail("merge", kExitRefused, path + ": " + std::string(req.status().message()));
  }
  // The daemon's limits by default, so that an input refused here is refused there too.
  absl::StatusOr<topologyd::hints::MergeResult> merged = topologyd::hints::MergeWithin(
      req->input,
      unlimited ? topologyd::hints::MergeLimits::Unlimited() : topologyd::hints::MergeLimits());
  if (!merged.ok()) {
    // No answer is not an answer "admit: false": the request failed (exit 1, docs/cli.md).
    return Fail("merge", kExitRefused, path + ": " + std::string(merged.status().message()));
  }
  const topologyd::hints::MergeResult& result = *merged;
  const std::vector<int> ids = topologyd::hints::AffinityIds(result.hint, req->node_ids);
  const nlohmann::json doc =
      nlohmann::json::parse(topologyd::hints::MergeResultToJson(result, req->node_ids));
  const std::string policy(topologyd::hints::PolicyName(req->input.policy));
  PrintResult(doc, globals.format(), [&](const nlohmann::json&) {
    std::cout << RenderTable(
        {"POLICY", "AFFINITY", "PREFERRED", "ADMIT"},
        {{policy, result.hint.affinity ? IdList(ids) : "any (nil)",
          result.hint.preferred ? "true" : "false", result.admit ? "true" : "false"}});
  });
  return kExitOk;
}

void InstallMerge(CLI::App& root, CommandContext& context) {
  auto* cmd = root.add_subcommand(
      "merge", "merge hint providers' answers as kubelet's Topology Manager would (offline)");
  auto path = std::make_shared<std::string>();
  auto unlimited = std::make_shared<bool>(false);
  cmd->add_option("--input", *path, "merge request JSON (docs/cli.md, merge), or - for stdin")
      ->required();
  cmd->add_flag("--unlimited", *unlimited,
                "merge without the work and memory limits (exact, but adversarial input can "
                "take minutes and gigabytes)");
  cmd->callback([&context, path, unlimited] {
    context.action = [&context, path, unlimited] {
      return RunMerge(*context.globals, *path, *unlimited);
    };
  });
}

}  // namespace
}  // namespace topoctl

TOPOCTL_REGISTER_COMMAND(topoctl::InstallMerge);
