// Expansion of an upward-closed hint list into the explicit list kubelet would hold.
//
// Used by tests and by small machines; the merge itself never expands (see merge.h).
#pragma once

#include <vector>

#include "lib/hints/topology_hint.h"

namespace topologyd::hints {

// Largest universe Expand() accepts: it returns up to 2^kMaxExpandNodes - 1 hints.
inline constexpr int kMaxExpandNodes = 24;

// The explicit list described by `hints`:
// * explicit form: `hints.hints`, unchanged;
// * upward-closed form: every non-empty mask M within `universe` that contains the affinity
//   of some entry, preferred iff M equals the affinity of an entry marked preferred, in order
//   of increasing size, then increasing value. Entries with a nil affinity or an affinity
//   outside `universe` describe nothing and are ignored.
// Precondition: `universe` has at most kMaxExpandNodes nodes (else the process aborts).
std::vector<TopologyHint> Expand(const ResourceHints& hints);

}  // namespace topologyd::hints
