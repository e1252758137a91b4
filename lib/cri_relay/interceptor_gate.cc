#include "lib/cri_relay/interceptor_gate.h"

namespace topologyd::cri_relay {

bool InterceptorGate::Enter() {
  if ((state_.fetch_add(1, std::memory_order_acq_rel) & kClosed) == 0) return true;
  Leave();
  return false;
}

void InterceptorGate::Leave() {
  if (state_.fetch_sub(1, std::memory_order_acq_rel) & kClosed) {
    // Close() may be waiting: wake it under the mutex so the wake-up cannot be missed.
    absl::MutexLock lock(&mu_);
  }
}

void InterceptorGate::Close() {
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::atomic<uint64_t>* state) { return state->load() == kClosed; }, &state_));
}

}  // namespace topologyd::cri_relay
