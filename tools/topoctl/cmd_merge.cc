// topoctl merge --input HINTS.json: kubelet's Topology Manager merge, offline.
// Reads a merge request (lib/hints/merge_json.h), prints the merged hint and the admit
// decision: a table by default, {"affinity": [ids] | null, "preferred": bool, "admit": bool}
// with --output json. Exit 1 when the request is refused (bad JSON, unknown policy, ids not
// in numa_nodes, more than 64 nodes, ...) or the merge exceeds the daemon's merge limits
// (hints::MergeLimits; --unlimited lifts them), 2 on bad usage.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "lib/hints/merge.h"
#include "lib/hints/merge_json.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

int RunMerge(const GlobalOptions& globals, const std::string& path, bool unlimited) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "topoctl merge: cannot read " << path << "\n";
      return kExitRefused;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  absl::StatusOr<topologyd::hints::MergeRequest> req = topologyd::hints::ParseMergeRequest(text);
  if (!req.ok()) {
    std::cerr << "topoctl merge: " << path << ": " << req.status().message() << "\n";
    return kExitRefused;
  }
  // The daemon's limits by default, so that an input refused here is refused there too.
  absl::StatusOr<topologyd::hints::MergeResult> merged = topologyd::hints::MergeWithin(
      req->input,
      unlimited ? topologyd::hints::MergeLimits::Unlimited() : topologyd::hints::MergeLimits());
  if (!merged.ok()) {
    // No answer is not an answer "admit: false": the request failed (exit 1, docs/cli.md).
    std::cerr << "topoctl merge: " << path << ": " << merged.status().message() << "\n";
    return kExitRefused;
  }
  const topologyd::hints::MergeResult& result = *merged;
  const std::vector<int> ids = topologyd::hints::AffinityIds(result.hint, req->node_ids);
  const std::string affinity = result.hint.affinity ? "[" + IdList(ids) + "]" : "null";
  const char* preferred = result.hint.preferred ? "true" : "false";
  const char* admit = result.admit ? "true" : "false";
  switch (globals.format()) {
    case OutputFormat::kJson:
      std::cout << topologyd::hints::MergeResultToJson(result, req->node_ids) << "\n";
      break;
    case OutputFormat::kYaml:
      std::cout << "affinity: " << affinity << "\npreferred: " << preferred << "\nadmit: " << admit
                << "\n";
      break;
    case OutputFormat::kTable: {
      const std::string shown = result.hint.affinity ? IdList(ids) : "any (nil)";
      std::cout << "POLICY            AFFINITY          PREFERRED  ADMIT\n";
      std::string policy(topologyd::hints::PolicyName(req->input.policy));
      policy.resize(std::max<size_t>(policy.size() + 1, 18), ' ');
      std::string shown_padded = shown;
      shown_padded.resize(std::max<size_t>(shown.size() + 1, 18), ' ');
      std::string pref = preferred;
      pref.resize(11, ' ');
      std::cout << policy << shown_padded << pref << admit << "\n";
      break;
    }
  }
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
