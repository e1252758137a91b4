// Test hooks of merge.cc: the reachable-set computation can be forced onto one engine, so
// that tests can check the engines against each other and against the brute force, and the
// work a merge did can be read back, so that tests and measurements can place inputs against
// MergeLimits.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

#include "lib/hints/merge.h"

namespace topologyd::hints::internal {

enum class ReachEngine {
  kAuto,    // what Merge() uses: sparse sets, switching to the dense transform when cheaper
  kSparse,  // sets of masks only
  kDense,   // the subset-lattice transform whenever the compressed universe allows it
};

// What one merge counted against its MergeLimits (up to where it stopped, if it did).
struct MergeStats {
  uint64_t peak_masks = 0;  // the most masks held at once (MergeLimits::max_masks)
  uint64_t steps = 0;       // elementary steps (MergeLimits::max_steps)
};

MergeResult MergeWithEngineForTest(const MergeInput& input, ReachEngine engine);

// MergeWithin() on `engine`; fills `stats` (if not null) whether or not the merge finished.
absl::StatusOr<MergeResult> MergeWithinForTest(const MergeInput& input, const MergeLimits& limits,
                                               ReachEngine engine, MergeStats* stats);

}  // namespace topologyd::hints::internal
