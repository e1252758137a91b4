// A token bucket: the kubelet's limit on its PodResources server (100 calls a second, bursts
// of 10), so a client polling in a loop cannot keep the engine's lock busy. A plain value;
// the caller serialises calls and passes the time.
#pragma once

#include <algorithm>
#include <chrono>

namespace topologyd::podresources {

class TokenBucket {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // `rate` tokens a second, at most `burst` saved up; full at `start`.
  TokenBucket(double rate, double burst, TimePoint start)
      : rate_(rate), burst_(burst), tokens_(burst), last_(start) {}

  // Takes a token when one is left at `now`.
  bool Take(TimePoint now) {
    if (now > last_) {
      const double seconds = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min(burst_, tokens_ + seconds * rate_);
      last_ = now;
    }
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  TimePoint last_;
};

// The kubelet's values (pkg/kubelet/apis/podresources: DefaultQPS, DefaultBurstTokens).
inline constexpr double kCallsPerSecond = 100;
inline constexpr double kBurstCalls = 10;

}  // namespace topologyd::podresources
