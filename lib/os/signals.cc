#include "lib/os/signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

namespace topologyd::os {
namespace {

sigset_t DaemonSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockDaemonSignals() {
  sigset_t set = DaemonSignalSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // The checkpoint store reuses a retired file only under a write lease, whose break (someone
  // opening the file meanwhile) the kernel signals with SIGIO; it must not end the daemon.
  signal(SIGIO, SIG_IGN);
}

std::optional<DaemonSignal> WaitForSignal(std::chrono::milliseconds timeout) {
  sigset_t set = DaemonSignalSet();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  int sig = sigtimedwait(&set, nullptr, &ts);
  if (sig == SIGHUP) return DaemonSignal::kReload;
  if (sig == SIGTERM || sig == SIGINT) return DaemonSignal::kTerminate;
  return std::nullopt;  // timeout (EAGAIN) or EINTR
}

}  // namespace topologyd::os
