// Process signals for the daemon, handled synchronously: the termination and reload
// signals are blocked in every thread (call BlockDaemonSignals() first in main(), before
// any thread starts, so all threads inherit the mask) and one thread collects them with
// WaitForSignal(). No code runs in signal-handler context, so nothing there can deadlock.
#pragma once

#include <chrono>
#include <optional>

namespace topologyd::os {

enum class DaemonSignal { kTerminate, kReload };

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and ignores SIGPIPE (a client
// hanging up must not kill the daemon) and SIGIO (see state::PosixFileSystem).
void BlockDaemonSignals();

// Waits up to `timeout` for a blocked daemon signal. nullopt on timeout.
std::optional<DaemonSignal> WaitForSignal(std::chrono::milliseconds timeout);

}  // namespace topologyd::os
