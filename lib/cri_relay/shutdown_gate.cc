#include "lib/cri_relay/shutdown_gate.h"

namespace topologyd::cri_relay {

bool ShutdownGate::Enter() {
  if ((state_.fetch_add(1, std::memory_order_acq_rel) & kClosed) == 0) return true;
  Leave();
  return false;
}

void ShutdownGate::Join() { state_.fetch_add(1, std::memory_order_acq_rel); }

void ShutdownGate::Leave() {
  if (state_.fetch_sub(1, std::memory_order_acq_rel) & kClosed) {
    // Close() may be waiting: pass through the mutex so that it re-checks.
    absl::MutexLock lock(&mu_);
  }
}

void ShutdownGate::Close() {
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::atomic<uint64_t>* state) { return state->load() == kClosed; }, &state_));
}

}  // namespace topologyd::cri_relay
