// ShutdownGate: lets Relay::Shutdown wait until things in flight are over (interceptor
// methods running, runtime call contexts alive) and keeps new ones from starting.
//
// Entering and leaving are two atomic operations, so a call that is not intercepted shares
// no lock with other calls. The mutex is taken only when leaving during shutdown.
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/synchronization/mutex.h"

namespace topologyd::cri_relay {

class ShutdownGate {
 public:
  // False once Close() has begun: whatever was to start must not.
  bool Enter();
  // Counted even after Close(): for what exists already and must be waited for.
  void Join();
  void Leave();
  // Refuses every later Enter() and waits until everything entered or joined has left.
  void Close();

 private:
  static constexpr uint64_t kClosed = uint64_t{1} << 63;
  std::atomic<uint64_t> state_{0};  // kClosed | how many are inside
  absl::Mutex mu_;
};

// Enter() and Leave() around one scope.
class ShutdownGateScope {
 public:
  explicit ShutdownGateScope(ShutdownGate& gate) : gate_(gate), open_(gate.Enter()) {}
  ~ShutdownGateScope() {
    if (open_) gate_.Leave();
  }
  ShutdownGateScope(const ShutdownGateScope&) = delete;
  ShutdownGateScope& operator=(const ShutdownGateScope&) = delete;
  bool open() const { return open_; }

 private:
  ShutdownGate& gate_;
  const bool open_;
};

}  // namespace topologyd::cri_relay
