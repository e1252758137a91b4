// The topologyd daemon's life cycle as ordered steps: load the configuration and the
// machine, start the engine and the gRPC server on the Unix socket, tell systemd it is
// ready, then serve signals (SIGHUP reload, SIGTERM/SIGINT stop, watchdog pings) until asked
// to stop, and tear down in reverse order.
#pragma once

#include <string>

namespace topologyd::daemon {

// Runs the daemon with the configuration at `config_path`; returns the process exit code.
// BlockDaemonSignals() must have been called before any thread started.
int RunDaemon(const std::string& config_path);

// `--check-config`: loads and validates `config_path` (including the topology source it
// names), prints the result; returns 0 when valid.
int CheckConfig(const std::string& config_path);

}  // namespace topologyd::daemon
