#include "lib/os/clock.h"

namespace topologyd::os {

std::chrono::steady_clock::time_point SteadyClock::Now() const {
  return std::chrono::steady_clock::now();
}

Clock& DefaultClock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace topologyd::os
