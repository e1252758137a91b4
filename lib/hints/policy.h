// Topology Manager policies and policy options, with kubelet's names, parsing rules and
// error texts (pkg/kubelet/cm/topologymanager policy_options.go and topology_manager.go).
//
// Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::hints {

// kubelet's four upstream policies.
enum class Policy { kNone, kBestEffort, kRestricted, kSingleNumaNode };

// "none", "best-effort", "restricted" or "single-numa-node".
std::string_view PolicyName(Policy policy);

// Parses a policy name exactly as kubelet spells it. Anything else is INVALID_ARGUMENT with
// kubelet's text `unknown policy: "<name>"`.
[[nodiscard]] absl::StatusOr<Policy> ParsePolicy(std::string_view name);

// kubelet refuses max-allowable-numa-nodes below its own default of 8.
inline constexpr int kKubeletDefaultMaxAllowableNumaNodes = 8;
// topologyd's own limit when the option is absent: masks hold 64 nodes and the merge does
// not enumerate the cross product, so it has no reason to stop at kubelet's 8.
inline constexpr int kDefaultMaxAllowableNumaNodes = 64;

struct PolicyOptions {
  // prefer-closest-numa-nodes: among equally narrow masks prefer the smaller average NUMA
  // distance (best-effort and restricted only).
  bool prefer_closest_numa_nodes = false;
  // max-allowable-numa-nodes: start-up limit on the number of NUMA nodes; never changes a
  // merge result. Values above INT32_MAX are stored as INT32_MAX.
  int max_allowable_numa_nodes = kDefaultMaxAllowableNumaNodes;
  friend bool operator==(const PolicyOptions&, const PolicyOptions&) = default;
};

// Parses kubelet's topologyManagerPolicyOptions map. Errors (INVALID_ARGUMENT) carry kubelet's
// texts, e.g.
//   unknown Topology Manager Policy option: "foo"
//   bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": invalid
//   syntax unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi:
//   parsing "x": invalid syntax the minimum value of "max-allowable-numa-nodes" should not be less
//   than 8
// Options that exist only in kubelet proposals are unknown options. Feature gates are not
// modelled: both upstream options are GA.
[[nodiscard]] absl::StatusOr<PolicyOptions> ParsePolicyOptions(
    const std::map<std::string, std::string>& options);

// Go's strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False; the error text is Go's
// (`strconv.ParseBool: parsing "x": invalid syntax`).
[[nodiscard]] absl::StatusOr<bool> ParseGoBool(std::string_view text);

// Go's strconv.Atoi on a 64-bit platform: optional sign, decimal digits, no spaces; errors
// `strconv.Atoi: parsing "x": invalid syntax` / `...: value out of range`.
[[nodiscard]] absl::StatusOr<int64_t> ParseGoInt(std::string_view text);

// Go's %q of a string (strconv.Quote) for the ASCII cases kubelet's messages meet.
std::string GoQuote(std::string_view text);

// kubelet's start-up check: with any policy but none, more NUMA nodes than the limit in force
// is FAILED_PRECONDITION "unsupported on machines with more than N NUMA Nodes".
[[nodiscard]] absl::Status CheckNumaNodeLimit(int num_nodes, Policy policy,
                                              const PolicyOptions& options);

// Whether a merged hint is admitted: best-effort and none always; restricted and
// single-numa-node only when the hint is preferred.
bool Admits(Policy policy, bool preferred);

}  // namespace topologyd::hints
