#include "lib/cpu/policy_options.h"

#include "fmt/format.h"

namespace topologyd::cpu {

const std::vector<PolicyOptionInfo>& KnownStaticPolicyOptions() {
  // Maturities of the kubelet policy_options.go these rules follow; a later kubelet
  // graduates strict-cpu-reservation and prefer-align-cpus-by-uncorecache to GA, which only
  // matters when the beta gate is switched off.
  static const std::vector<PolicyOptionInfo> kOptions = {
      {kFullPcpusOnlyOption, OptionMaturity::kGa},
      {kDistributeCpusAcrossNumaOption, OptionMaturity::kBeta},
      {kAlignBySocketOption, OptionMaturity::kAlpha},
      {kDistributeCpusAcrossCoresOption, OptionMaturity::kAlpha},
      {kStrictCpuReservationOption, OptionMaturity::kBeta},
      {kPreferAlignByUncoreCacheOption, OptionMaturity::kBeta},
  };
  return kOptions;
}

absl::StatusOr<bool> ParseGoBool(std::string_view value) {
  if (value == "1" || value == "t" || value == "T" || value == "TRUE" || value == "true" ||
      value == "True") {
    return true;
  }
  if (value == "0" || value == "f" || value == "F" || value == "FALSE" || value == "false" ||
      value == "False") {
    return false;
  }
  return absl::InvalidArgumentError(
      fmt::format("strconv.ParseBool: parsing \"{}\": invalid syntax", value));
}

namespace {

absl::Status IncompatibleError(std::string_view a, std::string_view b) {
  return absl::InvalidArgumentError(
      fmt::format("static policy options {} and {} can not be used at the same time", a, b));
}

}  // namespace

absl::Status ValidateOptionCompatibility(const StaticPolicyOptions& o) {
  if (o.full_pcpus_only && o.distribute_cpus_across_cores) {
    return IncompatibleError(kFullPcpusOnlyOption, kDistributeCpusAcrossCoresOption);
  }
  if (o.distribute_cpus_across_numa && o.distribute_cpus_across_cores) {
    return IncompatibleError(kDistributeCpusAcrossNumaOption, kDistributeCpusAcrossCoresOption);
  }
  if (o.prefer_align_by_uncore_cache && o.distribute_cpus_across_cores) {
    return IncompatibleError(kPreferAlignByUncoreCacheOption, kDistributeCpusAcrossCoresOption);
  }
  if (o.prefer_align_by_uncore_cache && o.distribute_cpus_across_numa) {
    return IncompatibleError(kPreferAlignByUncoreCacheOption, kDistributeCpusAcrossNumaOption);
  }
  return absl::OkStatus();
}

absl::StatusOr<StaticPolicyOptions> ParseStaticPolicyOptions(
    const std::map<std::string, std::string>& options, const PolicyOptionGates& gates) {
  StaticPolicyOptions result;
  for (const auto& [name, value] : options) {
    const PolicyOptionInfo* info = nullptr;
    for (const PolicyOptionInfo& known : KnownStaticPolicyOptions()) {
      if (known.name == name) info = &known;
    }
    if (info == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("unknown CPU Manager Policy option: \"{}\"", name));
    }
    if (info->maturity == OptionMaturity::kAlpha && !gates.alpha_options) {
      return absl::InvalidArgumentError(fmt::format(
          "CPU Manager Policy Alpha-level Options not enabled, but option \"{}\" provided", name));
    }
    if (info->maturity == OptionMaturity::kBeta && !gates.beta_options) {
      return absl::InvalidArgumentError(fmt::format(
          "CPU Manager Policy Beta-level Options not enabled, but option \"{}\" provided", name));
    }
    absl::StatusOr<bool> parsed = ParseGoBool(value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(fmt::format("bad value for option \"{}\": {}", name,
                                                    std::string(parsed.status().message())));
    }
    if (name == kFullPcpusOnlyOption) result.full_pcpus_only = *parsed;
    if (name == kDistributeCpusAcrossNumaOption) result.distribute_cpus_across_numa = *parsed;
    if (name == kAlignBySocketOption) result.align_by_socket = *parsed;
    if (name == kDistributeCpusAcrossCoresOption) result.distribute_cpus_across_cores = *parsed;
    if (name == kStrictCpuReservationOption) result.strict_cpu_reservation = *parsed;
    if (name == kPreferAlignByUncoreCacheOption) result.prefer_align_by_uncore_cache = *parsed;
  }
  absl::Status compatible = ValidateOptionCompatibility(result);
  if (!compatible.ok()) return compatible;
  return result;
}

absl::Status ValidateStaticPolicyOptionsForMachine(const StaticPolicyOptions& options,
                                                   const CpuTopology& topology,
                                                   std::string_view topology_manager_policy) {
  if (!options.align_by_socket) return absl::OkStatus();
  if (topology_manager_policy == "single-numa-node") {
    return absl::InvalidArgumentError(
        "Topolgy manager single-numa-node policy is incompatible with CPUManager "
        "align-by-socket policy option");
  }
  if (topology.num_sockets() > topology.num_numa_nodes()) {
    return absl::InvalidArgumentError(
        "Align by socket is not compatible with hardware where number of sockets are more "
        "than number of NUMA");
  }
  return absl::OkStatus();
}

absl::Status ValidateNonePolicyOptions(const std::map<std::string, std::string>& options) {
  if (options.empty()) return absl::OkStatus();
  std::string rendered;
  for (const auto& [name, value] : options) {
    if (!rendered.empty()) rendered += ' ';
    rendered += fmt::format("{}:{}", name, value);
  }
  return absl::InvalidArgumentError(
      fmt::format("None policy: received unsupported options=map[{}]", rendered));
}

}  // namespace topologyd::cpu
