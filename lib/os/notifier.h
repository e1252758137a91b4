// Notifier: tells the service manager about the daemon's life cycle (sd_notify(3)):
// READY=1, RELOADING=1 (+MONOTONIC_USEC), STOPPING=1, WATCHDOG=1 and STATUS=.
//
// SdNotifier talks to systemd through $NOTIFY_SOCKET and does nothing when the variable is
// unset, so the daemon runs the same way in a terminal. Tests record through their own
// Notifier, or point NOTIFY_SOCKET at their own datagram socket.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace topologyd::os {

class Notifier {
 public:
  virtual ~Notifier() = default;
  // `state` is one or more newline-separated assignments, as sd_notify takes them.
  virtual void Notify(std::string_view state) = 0;

  void Ready() { Notify("READY=1"); }
  void Stopping() { Notify("STOPPING=1"); }
  void Watchdog() { Notify("WATCHDOG=1"); }
  // STATUS=text, with newlines turned into spaces.
  void Status(std::string_view text);
  // RELOADING=1 with the CLOCK_MONOTONIC timestamp systemd expects alongside it.
  void Reloading();
};

class SdNotifier : public Notifier {
 public:
  void Notify(std::string_view state) override;
  // The watchdog interval systemd asked for ($WATCHDOG_USEC for this pid), if any.
  static std::optional<std::chrono::microseconds> WatchdogInterval();
};

}  // namespace topologyd::os
