// topoctl take: which CPUs kubelet's static CPU policy would give one Guaranteed container,
// offline (docs/cli.md, `take`). The machine comes from an hwloc XML file; the shared pool,
// reserved CPUs, options and the topology manager's NUMA affinity are given on the command
// line; the answer is computed by the same library code the daemon uses.
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/policy_options.h"
#include "lib/cpu/static_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/numa_mask.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

struct TakeFlags {
  MachineFlags machine;
  std::string available;
  int count = 0;
  std::string reserved;
  std::vector<std::string> options;
  std::optional<int> cpu_group_size;
  std::optional<std::string> affinity;
};

int TakeFail(int code, const std::string& message) {
  std::cerr << "topoctl: take: " << message << "\n";
  return code;
}

std::optional<topologyd::CpuSet> ParseList(const std::string& flag, const std::string& text) {
  absl::StatusOr<topologyd::CpuSet> set = topologyd::CpuSet::Parse(text);
  if (!set.ok()) {
    std::cerr << "topoctl: take: bad " << flag << " \"" << text
              << "\": " << std::string(set.status().message()) << "\n";
    return std::nullopt;
  }
  return *set;
}

int RunTake(const TakeFlags& flags, const GlobalOptions& globals) {
  using namespace topologyd;
  if (!flags.machine.given()) {
    return TakeFail(kExitUsage, "give the machine: --input FILE.xml or --synthetic DESC");
  }
  if (flags.count < 0) return TakeFail(kExitUsage, "--count must not be negative");
  std::map<std::string, std::string> raw_options;
  for (const std::string& option : flags.options) {
    const size_t eq = option.find('=');
    if (eq == std::string::npos) {
      raw_options[option] = "true";
    } else {
      raw_options[option.substr(0, eq)] = option.substr(eq + 1);
    }
  }
  std::optional<CpuSet> available = ParseList("--available", flags.available);
  std::optional<CpuSet> reserved = ParseList("--reserved", flags.reserved);
  if (!available || !reserved) return kExitUsage;
  std::optional<CpuSet> affinity_ids;
  if (flags.affinity.has_value()) {
    affinity_ids = ParseList("--affinity", *flags.affinity);
    if (!affinity_ids) return kExitUsage;
  }

  // Options as kubelet parses them; topoctl answers what-if questions, so the alpha and beta
  // option gates count as enabled.
  absl::StatusOr<cpu::StaticPolicyOptions> options = cpu::ParseStaticPolicyOptions(
      raw_options, cpu::PolicyOptionGates{.alpha_options = true, .beta_options = true});
  if (flags.cpu_group_size.has_value()) {
    if (!options.ok() || !options->distribute_cpus_across_numa) {
      return TakeFail(kExitUsage, "--cpu-group-size needs --option distribute-cpus-across-numa");
    }
    if (*flags.cpu_group_size < 1)
      return TakeFail(kExitUsage, "--cpu-group-size must be at least 1");
  }
  // A bad --option is a bad flag value: bad usage, as CLI11's own refusals are.
  if (!options.ok()) {
    return TakeFail(kExitUsage, "--option: " + std::string(options.status().message()));
  }

  absl::StatusOr<topology::Topology> machine = topology::LoadTopology(flags.machine.Source());
  if (!machine.ok()) return TakeFail(kExitRefused, std::string(machine.status().message()));
  cpu::CpuTopology cpus = cpu::FromTopology(*machine);
  // kubelet's CPU Manager never sees a CPU outside every NUMA node, so naming one here cannot
  // describe a real shared pool; without this check it would count as available but never be
  // chosen, and a refusal would report more CPUs available than were usable.
  for (const auto& [flag, set] :
       {std::pair{"--available", &*available}, std::pair{"--reserved", &*reserved}}) {
    const CpuSet absent = set->Difference(machine->AllCpus());
    const CpuSet outside_numa = set->Difference(cpus.Cpus()).Difference(absent);
    if (!absent.IsEmpty()) {
      return TakeFail(kExitUsage, fmt::format("{} names CPUs {}, which the topology does not have",
                                              flag, absent.ToString()));
    }
    if (!outside_numa.IsEmpty()) {
      return TakeFail(kExitUsage,
                      fmt::format("{} names CPUs {}, which belong to no NUMA node; kubelet's CPU "
                                  "Manager does not use such CPUs",
                                  flag, outside_numa.ToString()));
    }
  }

  std::optional<hints::NumaMask> affinity;
  if (affinity_ids.has_value()) {
    uint64_t bits = 0;
    for (int id : *affinity_ids) {
      const int position = cpus.numa().Position(id);
      if (position < 0 || position >= hints::NumaMask::kMaxNodes) {
        return TakeFail(kExitUsage, "--affinity names NUMA node " + std::to_string(id) +
                                        ", which the topology does not have");
      }
      bits |= uint64_t{1} << position;
    }
    affinity = hints::NumaMask(bits);
  }

  absl::Status machine_ok =
      cpu::ValidateStaticPolicyOptionsForMachine(*options, cpus, "best-effort");
  // Options or reserved CPUs this machine cannot take are flag values to fix: bad usage too.
  if (!machine_ok.ok())
    return TakeFail(kExitUsage, "--option: " + std::string(machine_ok.message()));
  absl::StatusOr<cpu::StaticPolicy> policy = cpu::StaticPolicy::Create(cpus, *options, *reserved);
  if (!policy.ok()) return TakeFail(kExitUsage, std::string(policy.status().message()));
  if (flags.cpu_group_size.has_value()) {
    cpu::TakeOptions take = policy->take_options();
    take.cpu_group_size = *flags.cpu_group_size;
    *policy = policy->WithTakeOptions(take);
  }

  cpu::CpuState state;
  state.default_cpu_set = *available;
  cpu::ContainerRequest request;
  request.pod_uid = "topoctl-take";
  request.name = "container";
  request.exclusive_cpus = flags.count;
  absl::StatusOr<cpu::Allocation> allocation = policy->Allocate(state, request, affinity);
  if (!allocation.ok()) {
    // Too few free CPUs: what was asked and what is free, then kubelet's count of the leftover.
    const std::string summary = cpu::RejectionSummary(allocation.status());
    return TakeFail(kExitRefused, cpu::RejectionReason(allocation.status()) + ": " +
                                      (summary.empty() ? "" : summary + "; kubelet: ") +
                                      std::string(allocation.status().message()));
  }
  const std::string list = allocation->cpus.ToString();
  PrintResult(nlohmann::json{{"cpus", list}}, globals.format(),
              [&list](const nlohmann::json&) { std::cout << list << "\n"; });
  return kExitOk;
}

void InstallTake(CLI::App& root, CommandContext& context) {
  auto flags = std::make_shared<TakeFlags>();
  CLI::App* take = root.add_subcommand(
      "take", "kubelet's static-policy CPU choice for one Guaranteed container (offline)");
  AddMachineFlags(take, &flags->machine, "of the machine");
  take->add_option("--available", flags->available, "shared pool (cpu list)")->required();
  take->add_option("--count", flags->count, "exclusive CPUs requested")->required();
  take->add_option("--reserved", flags->reserved, "reserved CPUs (cpu list)");
  take->add_option("--option", flags->options,
                   "static policy option NAME[=VALUE], kubelet's names; repeatable");
  take->add_option("--cpu-group-size", flags->cpu_group_size,
                   "group size of distribute-cpus-across-numa");
  take->add_option("--affinity", flags->affinity,
                   "topology manager NUMA affinity (NUMA OS ids, list syntax)");
  take->callback([flags, &context] {
    context.action = [flags, &context] { return RunTake(*flags, *context.globals); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallTake);

}  // namespace
}  // namespace topoctl
