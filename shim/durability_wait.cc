#include "shim/durability_wait.h"

#include <utility>

namespace topologyd::shim {

void DurabilityWait::Settle(absl::Status outcome) {
  absl::MutexLock lock(&mu_);
  if (!outcome_) outcome_ = std::move(outcome);
}

std::optional<absl::Status> DurabilityWait::outcome() const {
  absl::MutexLock lock(&mu_);
  return outcome_;
}

absl::Status DurabilityWait::Wait() const {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](const std::optional<absl::Status>* o) { return o->has_value(); }, &outcome_));
  return *outcome_;
}

}  // namespace topologyd::shim
