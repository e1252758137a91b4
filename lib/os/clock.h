// Clock: where code that measures durations or waits for deadlines reads the time, so that a
// test can move time on instead of sleeping.
#pragma once

#include <chrono>

namespace topologyd::os {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
};

// std::chrono::steady_clock. Stateless and thread-safe.
class SteadyClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override;
};

// One shared instance, for callers given no clock.
Clock& DefaultClock();

}  // namespace topologyd::os
