// topologyd-shim: the kubelet shim, a CRI relay between kubelet and the container runtime
// that places every container through topologyd. See docs/shim.md.
#include <iostream>

#include "CLI/CLI.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/common/version.h"
#include "lib/config/config_loader.h"
#include "lib/os/signals.h"

#include "shim/shim.h"
#include "shim/shim_config.h"

int main(int argc, char** argv) {
  // Before any thread starts, so only the signal loop sees SIGTERM/SIGINT/SIGHUP.
  topologyd::os::BlockDaemonSignals();

  CLI::App app{"topologyd-shim: CRI relay between kubelet and the container runtime"};
  std::string config_path;
  std::string listen;
  std::string runtime_endpoint;
  std::string topologyd_socket;
  std::string check_path;
  app.set_version_flag("--version", std::string("topologyd-shim ") + topologyd::kVersion);
  app.add_option("-c,--config", config_path, "configuration file (defaults apply without one)");
  app.add_option("--listen", listen, "unix://PATH kubelet's --container-runtime-endpoint names");
  app.add_option("--runtime-endpoint", runtime_endpoint, "unix://PATH of containerd or CRI-O");
  app.add_option("--topologyd-socket", topologyd_socket, "PATH of topologyd's socket");
  // As topologyd's: --check-config FILE validates FILE and exits; the older form, -c FILE
  // --check-config, still works.
  CLI::Option* check = app.add_option("--check-config", check_path,
                                      "validate this configuration file (or -c's) and exit")
                           ->expected(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  if (!check_path.empty()) {
    if (!config_path.empty() && config_path != check_path) {
      std::cerr << "topologyd-shim: --check-config " << check_path << " and -c " << config_path
                << " name two files; give the file once\n";
      return 2;
    }
    config_path = check_path;
  }

  // Flags override the file; the result is checked as a whole, as the file is.
  std::string text;
  if (!config_path.empty()) {
    absl::StatusOr<std::string> read = topologyd::config::ReadConfigFile(config_path);
    if (!read.ok()) {
      std::cerr << "topologyd-shim: " << read.status().message() << "\n";
      return 2;
    }
    text = *read;
  }
  absl::StatusOr<topologyd::shim::ShimConfig> config =
      topologyd::shim::ParseShimConfig(text, config_path.empty() ? "(defaults)" : config_path);
  if (config.ok()) {
    if (!listen.empty()) config->listen = listen;
    if (!runtime_endpoint.empty()) config->runtime_endpoint = runtime_endpoint;
    if (!topologyd_socket.empty()) config->topologyd_socket = topologyd_socket;
    config = topologyd::shim::ValidateShimConfig(*config);
  }
  if (!config.ok()) {
    std::cerr << "topologyd-shim: " << config.status().message() << "\n";
    return 2;
  }
  if (check->count() > 0) {
    std::cout << "topologyd-shim: configuration OK\n";
    return 0;
  }
  return topologyd::shim::RunShim(config_path, *config);
}
