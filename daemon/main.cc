// topologyd: node agent that admits pods and pins their containers to CPUs, memory nodes
// and devices with kubelet's topology decisions. See docs/architecture.md.
#include <iostream>

#include "CLI/CLI.hpp"

#include "daemon/daemon.h"
#include "lib/common/version.h"
#include "lib/os/signals.h"

int main(int argc, char** argv) {
  // First, before any library can start a thread: every thread inherits this mask, so the
  // signal loop is the only place that ever sees SIGTERM/SIGINT/SIGHUP.
  topologyd::os::BlockDaemonSignals();

  CLI::App app{"topologyd: out-of-process CPU, memory and device topology manager"};
  std::string config_path = "/etc/topologyd/config.yaml";
  std::string check_path;
  app.set_version_flag("--version", std::string("topologyd ") + topologyd::kVersion);
  app.footer(
      "Configuration: docs/configuration.md (check a file with --check-config FILE); running "
      "it: docs/operations.md; the client: topoctl --help, docs/cli.md.");
  app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
  app.add_option("--check-config", check_path, "validate this configuration file and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!check_path.empty()) return topologyd::daemon::CheckConfig(check_path);
  return topologyd::daemon::RunDaemon(config_path);
}
