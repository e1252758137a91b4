// How much work kubelet's Topology Manager would do for one admission: its merge builds the
// full cross product of the providers' hint lists (after filterProvidersHints and, under
// single-numa-node, filterSingleNumaHints) and compares every combination. topologyd's merge
// does not enumerate (docs/merge.md); this counts what kubelet would, from the hints
// topologyd's own providers gave for the decision.
#pragma once

#include "lib/admission/admission.h"
#include "lib/hints/policy.h"
#include "lib/hints/topology_hint.h"

namespace topologyd::simulate {

// The length of the list kubelet would hold for `list` (an upward-closed list counted as its
// expansion), filtered as kubelet filters it: a missing list counts 1 (kubelet substitutes
// {any, preferred}), an empty one 1 ({any, not preferred}); under single-numa-node only the
// preferred hints of one node or of any node are kept. Counts past 2^53 lose precision, and
// an upward-closed list whose expansion cannot be counted cheaply (more than 2^16 subsets to
// look at) is counted as a lower bound: the supersets of its narrowest entry.
double KubeletListLength(const hints::HintList& list, hints::Policy policy);

// The product of KubeletListLength over every resource of every provider in `step`: the
// combinations kubelet's merge enumerates for that step.
double KubeletCombinations(const admission::MergeStep& step, hints::Policy policy);

// The sum over the steps of one admission (one merge per container in container scope, one
// per pod in pod scope).
double KubeletCombinations(const admission::Explanation& explanation);

// The cost of one combination in kubelet's merge, in nanoseconds: the brute-force reference
// merge (tests/unit/hints/reference_merge.h, a direct transcription of kubelet's loop in C++)
// measured by bench/simulate_bench.cc, BM_KubeletCombination (12.35 ns of CPU time on an
// 8-NUMA cross product of 3 providers x 255 hints; docs/simulate.md), rounded down. Go's
// version, which allocates per combination, is not faster, so times derived from it are lower
// bounds for kubelet and a warning is never a false alarm.
inline constexpr double kKubeletNsPerCombination = 12.0;

}  // namespace topologyd::simulate
