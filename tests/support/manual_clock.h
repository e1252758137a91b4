// ManualClock: an os::Clock that stands still until the test moves it on. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>

#include "lib/os/clock.h"

namespace topologyd::testing {

class ManualClock final : public os::Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  // Far from the epoch, so that deadlines computed from it never underflow.
  std::chrono::steady_clock::time_point now_{std::chrono::hours(24)};
};

}  // namespace topologyd::testing
