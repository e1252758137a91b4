#include "lib/os/notifier.h"

#include <time.h>

#include <algorithm>
#include <string>

#include "fmt/format.h"
#include <systemd/sd-daemon.h>

namespace topologyd::os {

void Notifier::Status(std::string_view text) {
  // One line: a newline would start another assignment (READY=1, ...) in the datagram.
  std::string line(text);
  std::replace(line.begin(), line.end(), '\n', ' ');
  Notify("STATUS=" + line);
}

void Notifier::Reloading() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t usec =
      static_cast<uint64_t>(now.tv_sec) * 1000000U + static_cast<uint64_t>(now.tv_nsec) / 1000U;
  Notify(fmt::format("RELOADING=1\nMONOTONIC_USEC={}", usec));
}

void SdNotifier::Notify(std::string_view state) {
  // Failures are ignored on purpose: a lost notification must not stop the daemon, and
  // systemd reports a missing READY itself.
  (void)sd_notify(0, std::string(state).c_str());
}

std::optional<std::chrono::microseconds> SdNotifier::WatchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    return std::chrono::microseconds(usec);
  }
  return std::nullopt;
}

}  // namespace topologyd::os
