// The Topology Manager merge: from every hint provider's answer to one merged hint and an
// admit decision, equal to kubelet's (v1.26+ HintMerger; semantics of v1.24+) on every input,
// without enumerating kubelet's cross product of hint lists. The rules it reproduces, the
// algorithm, the proof sketch and the complexity bounds (the problem is NP-hard in general):
// docs/merge.md.
//
// MergeWithin() bounds the work and memory and gives up with RESOURCE_EXHAUSTED rather than
// run for minutes: a daemon must not hang or run out of memory on one request.
// Masks are over NUMA positions (numa_mask.h); callers translate OS ids at the edges.
// Pure and thread-compatible.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/hints/numa_mask.h"
#include "lib/hints/policy.h"
#include "lib/hints/topology_hint.h"

namespace topologyd::hints {

// The largest number of NUMA nodes (distinct node classes after compression) on which the
// merge uses its dense engine: subset-lattice arrays of 2^22 masks (32 MiB). Above it the merge
// works on sparse sets, whose cost grows with the lists' lengths: providers that can produce
// long explicit lists on larger machines keep them short there.
inline constexpr int kMaxDenseMergeNodes = 22;

struct MergeInput {
  // Number of NUMA nodes; positions 0..num_nodes-1 form kubelet's default affinity.
  int num_nodes = 0;
  // Position-indexed distance matrix (num_nodes x num_nodes), or empty when unknown. Used only
  // by prefer-closest-numa-nodes under best-effort and restricted.
  std::vector<std::vector<double>> distances;
  Policy policy = Policy::kBestEffort;
  PolicyOptions options;
  // One entry per hint provider, in kubelet's registration order (the result does not depend
  // on the order).
  std::vector<ProviderHints> providers;
  // Optional names of the providers, by the same position, used only in messages ("provider
  // \"memory\"" instead of "provider 3"); a provider without a name here goes by position.
  std::vector<std::string> provider_names;
};

struct MergeResult {
  TopologyHint hint;
  bool admit = false;
  friend bool operator==(const MergeResult&, const MergeResult&) = default;
};

// Checks what kubelet would check before merging: 0 <= num_nodes <= 64; `distances` empty or
// square of size num_nodes; prefer-closest-numa-nodes under best-effort/restricted needs the
// distances (kubelet fails to start without them). INVALID_ARGUMENT otherwise.
// It does not apply the max-allowable-numa-nodes limit (see CheckNumaNodeLimit()).
[[nodiscard]] absl::Status ValidateMergeInput(const MergeInput& input);

// kubelet's Merge() for `input.policy`:
//   none             -> {nil, false}, admit
//   best-effort      -> merged hint, admit
//   restricted       -> merged hint, admit iff preferred
//   single-numa-node -> merged hint of the single-NUMA-filtered lists, the default mask
//                       reported as nil, admit iff preferred.
// Upward-closed lists behave exactly as their Expand()ed lists. Hint masks may have bits at or
// above num_nodes: as in kubelet they count for the narrowest-size rule and are cut by the AND
// with the default affinity. If prefer-closest applies but `distances` is empty, no distance
// tie-break is made (ValidateMergeInput() rejects that input).
// Unbounded: MergeWithin() with MergeLimits::Unlimited(). Its time and memory are exponential
// on adversarial inputs (docs/merge.md); code serving requests uses MergeWithin().
MergeResult Merge(const MergeInput& input);

// How much one merge may do before MergeWithin() gives up. docs/merge.md ("Limits") has the
// measurements behind the defaults: real providers' lists on machines of up to 22 NUMA nodes
// stay more than 10x below them; inputs for which no polynomial merge is known pass them.
struct MergeLimits {
  // The defaults: 2^22 masks held (32 MiB per copy of a set; with the set being replaced and
  // the sort scratch, peak memory stays near 100 MiB), 2^28 steps (up to about a second).
  static constexpr uint64_t kDefaultMaxMasks = uint64_t{1} << 22;
  static constexpr uint64_t kDefaultMaxSteps = uint64_t{1} << 28;

  // The most NUMA masks the merge holds at once in its intermediate sets: the reachable masks
  // of the explicit lists (the set being built and the one it replaces), the minimal masks of
  // the upward-closed lists, and the dense engine's tables (one mask per entry). 8 bytes each.
  uint64_t max_masks = kDefaultMaxMasks;
  // The most elementary steps: one AND of two masks, one comparison, one addition of a
  // transform, one entry sorted.
  uint64_t max_steps = kDefaultMaxSteps;

  // No bound at all: what Merge() uses.
  static constexpr MergeLimits Unlimited() {
    return MergeLimits{std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};
  }
};

// Merge() within `limits`: exactly Merge()'s result, or RESOURCE_EXHAUSTED when the merge
// would hold more masks or take more steps than allowed. The message names the limit passed,
// the sizes reached and where, e.g. "hint merge exceeds its memory limit: 6291456 NUMA masks
// held while adding the 2 masks of hint list 22 of 26 (provider 22, resource \"memory\") to
// 2097152 reachable masks on 26 NUMA nodes (limit 4194304 masks)"; with `provider_names`,
// "(provider \"memory\", resource \"memory\")". Never a different answer: the merge stops, it
// does not cut corners.
[[nodiscard]] absl::StatusOr<MergeResult> MergeWithin(const MergeInput& input,
                                                      const MergeLimits& limits = MergeLimits());

// kubelet's CalculateAverageFor: the mean of distances[i][j] over all ordered pairs of the
// mask's positions (diagonal included), summed in ascending (i, j) order as float64; 0 for
// the empty mask. Entries missing from `distances` count as 0.
double AverageDistance(NumaMask mask, const std::vector<std::vector<double>>& distances);

}  // namespace topologyd::hints
