// The static CPU policy's options (kubelet's --cpu-manager-policy-options), their parsing,
// maturity gates and compatibility rules (docs/cpu-policy.md, "Options").
//
// Option names and error texts are kubelet's, so that a configuration copied from a
// KubeletConfiguration behaves, and fails, the same way. Pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_topology.h"

namespace topologyd::cpu {

inline constexpr std::string_view kFullPcpusOnlyOption = "full-pcpus-only";
inline constexpr std::string_view kDistributeCpusAcrossNumaOption = "distribute-cpus-across-numa";
inline constexpr std::string_view kAlignBySocketOption = "align-by-socket";
inline constexpr std::string_view kDistributeCpusAcrossCoresOption = "distribute-cpus-across-cores";
inline constexpr std::string_view kStrictCpuReservationOption = "strict-cpu-reservation";
inline constexpr std::string_view kPreferAlignByUncoreCacheOption =
    "prefer-align-cpus-by-uncorecache";

enum class OptionMaturity { kAlpha, kBeta, kGa };

// Every option kubelet knows, with its maturity (as in the newest kubelet text we follow;
// with the default gates every option but the alpha ones is accepted).
struct PolicyOptionInfo {
  std::string_view name;
  OptionMaturity maturity;
};
const std::vector<PolicyOptionInfo>& KnownStaticPolicyOptions();

// kubelet's CPUManagerPolicyAlphaOptions (default off) and CPUManagerPolicyBetaOptions
// (default on) feature gates.
struct PolicyOptionGates {
  bool alpha_options = false;
  bool beta_options = true;
};

struct StaticPolicyOptions {
  bool full_pcpus_only = false;
  bool distribute_cpus_across_numa = false;
  bool align_by_socket = false;
  bool distribute_cpus_across_cores = false;
  bool strict_cpu_reservation = false;
  bool prefer_align_by_uncore_cache = false;
  friend bool operator==(const StaticPolicyOptions&, const StaticPolicyOptions&) = default;
};

// Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
// INVALID_ARGUMENT `strconv.ParseBool: parsing "<v>": invalid syntax` otherwise.
absl::StatusOr<bool> ParseGoBool(std::string_view value);

// Parses option name -> value as kubelet's NewStaticPolicyOptions does, options visited in
// name order. INVALID_ARGUMENT with kubelet's text:
//   unknown CPU Manager Policy option: "<x>"
//   CPU Manager Policy Alpha-level Options not enabled, but option "<x>" provided
//   CPU Manager Policy Beta-level Options not enabled, but option "<x>" provided
//   bad value for option "<x>": strconv.ParseBool: parsing "<v>": invalid syntax
//   static policy options <a> and <b> can not be used at the same time
absl::StatusOr<StaticPolicyOptions> ParseStaticPolicyOptions(
    const std::map<std::string, std::string>& options, const PolicyOptionGates& gates = {});

// The compatibility pairs alone (also applied by ParseStaticPolicyOptions).
absl::Status ValidateOptionCompatibility(const StaticPolicyOptions& options);

// kubelet's checks of options against the machine and the topology manager policy
// ("none", "best-effort", "restricted", "single-numa-node"). align-by-socket is refused with
// single-numa-node and on machines with more sockets than NUMA nodes. INVALID_ARGUMENT with
// kubelet's text (including its "Topolgy" spelling).
absl::Status ValidateStaticPolicyOptionsForMachine(const StaticPolicyOptions& options,
                                                   const CpuTopology& topology,
                                                   std::string_view topology_manager_policy);

// The "none" policy accepts no option: INVALID_ARGUMENT "None policy: received unsupported
// options=map[a:b ...]" when `options` is not empty.
absl::Status ValidateNonePolicyOptions(const std::map<std::string, std::string>& options);

}  // namespace topologyd::cpu
