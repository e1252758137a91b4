// DurabilityWait: an admission topologyd answered as soon as it was decided, before its
// checkpoint was written. The shim creates the container meanwhile and tells kubelet only once
// this has settled: OK when topologyd says the decision is on disk, an error when it cannot
// (the write failed, topologyd restarted or did not answer in time).
//
// Thread-safe.
#pragma once

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace topologyd::shim {

class DurabilityWait {
 public:
  // The first outcome counts; later ones are ignored.
  void Settle(absl::Status outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // The outcome, without waiting; nullopt while unsettled.
  std::optional<absl::Status> outcome() const ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until settled (the call that settles it has a deadline).
  absl::Status Wait() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::optional<absl::Status> outcome_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::shim
