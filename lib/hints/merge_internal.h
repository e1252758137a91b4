// Test hooks of merge.cc: the reachable-set computation can be forced onto one engine, so
// that tests can check the engines against each other and against the brute force.
#pragma once

#include "lib/hints/merge.h"

namespace topologyd::hints::internal {

enum class ReachEngine {
  kAuto,    // what Merge() uses: sparse sets, switching to the dense transform when cheaper
  kSparse,  // sets of masks only
  kDense,   // the subset-lattice transform whenever the compressed universe allows it
};

MergeResult MergeWithEngineForTest(const MergeInput& input, ReachEngine engine);

}  // namespace topologyd::hints::internal
