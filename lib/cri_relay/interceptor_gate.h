// InterceptorGate: lets Relay::Shutdown wait until no interceptor method is running, so that
// the shim may destroy its interceptor once the relay is shut down.
//
// Entering and leaving are two atomic operations: a call that is not intercepted asks
// Intercepts() through the gate and never takes a lock shared with other calls. The mutex is
// taken only when leaving during shutdown.
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/synchronization/mutex.h"

namespace topologyd::cri_relay {

class InterceptorGate {
 public:
  // False once Close() has begun: the interceptor must not be called.
  bool Enter();
  void Leave();
  // Refuses every later Enter() and waits until every entered caller has left.
  void Close();

 private:
  static constexpr uint64_t kClosed = uint64_t{1} << 63;
  std::atomic<uint64_t> state_{0};  // kClosed | how many are inside
  absl::Mutex mu_;
};

// Enter() and Leave() around one scope.
class InterceptorGateScope {
 public:
  explicit InterceptorGateScope(InterceptorGate& gate) : gate_(gate), open_(gate.Enter()) {}
  ~InterceptorGateScope() {
    if (open_) gate_.Leave();
  }
  InterceptorGateScope(const InterceptorGateScope&) = delete;
  InterceptorGateScope& operator=(const InterceptorGateScope&) = delete;
  bool open() const { return open_; }

 private:
  InterceptorGate& gate_;
  const bool open_;
};

}  // namespace topologyd::cri_relay
