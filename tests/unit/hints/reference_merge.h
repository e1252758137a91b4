// A brute-force model of kubelet's Topology Manager merge, written as plainly as its rules
// (docs/merge.md, "kubelet's rules"): expand every list, filter, build
// the full cross product, merge each permutation and keep the better candidate with kubelet's
// compare() case by case. Exponential on purpose; it is the oracle the fast merge is tested
// (and benchmarked) against. Shares only the data types with lib/hints.
#pragma once

#include <vector>

#include "lib/hints/merge.h"
#include "lib/hints/topology_hint.h"

namespace topologyd::hints::reference {

// The explicit list an upward-closed list stands for: all non-empty subsets of the universe
// containing some entry's affinity; preferred iff equal to a preferred entry's affinity.
std::vector<TopologyHint> ExpandPlain(const ResourceHints& list);

// kubelet's Merge() by full enumeration.
MergeResult ReferenceMerge(const MergeInput& input);

// Number of permutations ReferenceMerge() would enumerate (saturating).
double PermutationCount(const MergeInput& input);

}  // namespace topologyd::hints::reference
