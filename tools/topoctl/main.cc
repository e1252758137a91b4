// topoctl: the topologyd command-line client. Online commands talk to the daemon over its
// Unix socket; offline "what-if" commands run the same library code locally.
#include <iostream>

#include "CLI/CLI.hpp"

#include "lib/common/version.h"
#include "tools/topoctl/command.h"

namespace topoctl {

std::vector<CommandInstaller>& CommandInstallers() {
  static std::vector<CommandInstaller> installers;
  return installers;
}

}  // namespace topoctl

int main(int argc, char** argv) {
  topoctl::GlobalOptions globals;
  topoctl::CommandContext context;
  context.globals = &globals;

  CLI::App app{"topoctl: inspect and drive topologyd, or ask it what-if questions offline"};
  app.set_version_flag("--version", std::string("topoctl ") + topologyd::kVersion);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--socket", globals.socket, "daemon socket path")->capture_default_str();
  app.add_option("-o,--output", globals.output, "output format")
      ->check(CLI::IsMember({"table", "json", "yaml", "svg"}))
      ->capture_default_str();
  for (const auto& install : topoctl::CommandInstallers()) install(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // --help and --version are successes; everything else CLI11 rejects is bad usage.
    return code == 0 ? topoctl::kExitOk : topoctl::kExitUsage;
  }
  if (!context.action) {
    std::cerr << "topoctl: no command given; see topoctl --help\n";
    return topoctl::kExitUsage;
  }
  if (globals.output == "svg" && !context.accepts_svg) {
    std::cerr << "topoctl: --output svg is for the topology and allocations commands\n";
    return topoctl::kExitUsage;
  }
  return context.action();
}
