#include "lib/config/node_policy_config.h"

#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/key_status.h"
#include "lib/cpu/policy_options.h"
#include "lib/pod/quantity.h"

namespace topologyd::config {
namespace {

absl::StatusOr<admission::Scope> ParseScope(std::string_view name) {
  if (name == "container") return admission::Scope::kContainer;
  if (name == "pod") return admission::Scope::kPod;
  // kubelet's text for an unknown scope.
  return absl::InvalidArgumentError(fmt::format("unknown scope: \"{}\"", name));
}

// cpuManagerPolicy and what it reads: options (static only; none refuses any), reserved CPUs.
absl::Status ParseCpuPolicy(const Config& config, admission::NodeSpec* spec) {
  if (config.cpu_manager_policy == "none") {
    absl::Status none = cpu::ValidateNonePolicyOptions(config.cpu_manager_policy_options);
    if (!none.ok()) return KeyError("cpuManagerPolicyOptions", none);
    spec->cpu_policy = admission::CpuManagerPolicy::kNone;
    return absl::OkStatus();
  }
  if (config.cpu_manager_policy != "static") {
    return KeyInvalid("cpuManagerPolicy",
                      fmt::format("unknown policy: \"{}\"", config.cpu_manager_policy));
  }
  spec->cpu_policy = admission::CpuManagerPolicy::kStatic;
  absl::StatusOr<cpu::StaticPolicyOptions> options = cpu::ParseStaticPolicyOptions(
      config.cpu_manager_policy_options,
      cpu::PolicyOptionGates{.alpha_options = config.feature_gates.cpu_manager_policy_alpha_options,
                             .beta_options = config.feature_gates.cpu_manager_policy_beta_options});
  if (!options.ok()) return KeyError("cpuManagerPolicyOptions", options.status());
  spec->cpu_options = *options;
  spec->cpu_reserved_count = config.cpu_reserved_count;
  if (config.reserved_system_cpus.has_value()) {
    absl::StatusOr<CpuSet> parsed = CpuSet::Parse(*config.reserved_system_cpus);
    if (!parsed.ok()) return KeyError("reservedSystemCPUs", parsed.status());
    spec->reserved_system_cpus = *parsed;
  }
  return absl::OkStatus();
}

// Bytes of a quantity at `key`: whole and non-negative, as memory amounts are.
absl::StatusOr<uint64_t> Bytes(const std::string& key, const std::string& text) {
  absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(text);
  if (!q.ok()) return KeyError(key, q.status());
  std::optional<int64_t> bytes = q->AsInt64();
  if (!bytes.has_value() || *bytes < 0) {
    return KeyInvalid(key,
                      fmt::format("\"{}\" is not a whole, non-negative number of bytes", text));
  }
  return static_cast<uint64_t>(*bytes);
}

absl::StatusOr<std::vector<memory::ReservedMemory>> ConvertReservedMemory(const Config& config) {
  std::vector<memory::ReservedMemory> out;
  for (size_t i = 0; i < config.reserved_memory.size(); ++i) {
    const ReservedMemoryConfig& entry = config.reserved_memory[i];
    memory::ReservedMemory converted{.numa_node = entry.numa_node, .limits = {}};
    for (const auto& [resource, text] : entry.limits) {
      const std::string key = fmt::format("reservedMemory[{}].limits.{}", i, resource);
      absl::StatusOr<uint64_t> bytes = Bytes(key, text);
      if (!bytes.ok()) return bytes.status();
      converted.limits[resource] = *bytes;
    }
    out.push_back(std::move(converted));
  }
  return out;
}

// kubelet's default hard eviction threshold for memory, used when evictionHard is not set.
constexpr uint64_t kDefaultMemoryEviction = uint64_t{100} << 20;  // 100Mi

// kubelet's Node Allocatable reservation of the memory types: kubeReserved + systemReserved,
// plus the hard eviction threshold memory.available for `memory` (kubelet's default, 100Mi,
// when evictionHard is not set at all). Other resources and signals are checked for syntax
// only. nullopt when none of the three keys is set: then there is nothing to check against.
absl::StatusOr<std::optional<std::map<std::string, uint64_t>>> NodeAllocatableReservation(
    const Config& config) {
  if (!config.kube_reserved && !config.system_reserved && !config.eviction_hard) {
    return std::nullopt;
  }
  std::map<std::string, uint64_t> reservation;
  for (const auto& [key, values] : {std::pair{"kubeReserved", &config.kube_reserved},
                                    std::pair{"systemReserved", &config.system_reserved}}) {
    if (!values->has_value()) continue;
    for (const auto& [resource, text] : **values) {
      const std::string at = fmt::format("{}.{}", key, resource);
      if (resource == "memory" || resource.starts_with("hugepages-")) {
        absl::StatusOr<uint64_t> bytes = Bytes(at, text);
        if (!bytes.ok()) return bytes.status();
        reservation[resource] += *bytes;
      } else if (absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(text); !q.ok()) {
        return KeyError(at, q.status());
      }
    }
  }
  if (!config.eviction_hard) {
    reservation["memory"] += kDefaultMemoryEviction;
  } else {
    for (const auto& [signal, text] : *config.eviction_hard) {
      const std::string at = fmt::format("evictionHard.{}", signal);
      if (text.ends_with('%')) {
        // kubelet takes a percentage of the node's memory capacity as cAdvisor reads it,
        // which topologyd does not know to the byte.
        if (signal == "memory.available") {
          return KeyInvalid(at, fmt::format("\"{}\": give memory.available as a quantity (the "
                                            "bytes kubelet reserves for it), not a percentage",
                                            text));
        }
        double percent = 0;
        const char* end = text.data() + text.size() - 1;
        if (std::from_chars(text.data(), end, percent).ptr != end || !(percent > 0) ||
            percent > 100) {
          return KeyInvalid(
              at, fmt::format("\"{}\": a percentage must be above 0% and at most 100%", text));
        }
        continue;
      }
      if (signal == "memory.available") {
        absl::StatusOr<uint64_t> bytes = Bytes(at, text);
        if (!bytes.ok()) return bytes.status();
        reservation["memory"] += *bytes;
      } else if (absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(text); !q.ok()) {
        return KeyError(at, q.status());
      }
    }
  }
  return std::optional<std::map<std::string, uint64_t>>(std::move(reservation));
}

// memoryManagerPolicy; reservedMemory and Node Allocatable are read only for Static.
absl::Status ParseMemoryPolicy(const Config& config, admission::NodeSpec* spec) {
  if (config.memory_manager_policy == "None") {
    spec->memory_policy = admission::MemoryManagerPolicy::kNone;
    return absl::OkStatus();
  }
  if (config.memory_manager_policy != "Static") {
    return KeyInvalid("memoryManagerPolicy",
                      fmt::format("unknown policy: \"{}\"", config.memory_manager_policy));
  }
  spec->memory_policy = admission::MemoryManagerPolicy::kStatic;
  absl::StatusOr<std::vector<memory::ReservedMemory>> reserved = ConvertReservedMemory(config);
  if (!reserved.ok()) return reserved.status();
  spec->reserved_memory = *std::move(reserved);
  absl::StatusOr<std::optional<std::map<std::string, uint64_t>>> allocatable =
      NodeAllocatableReservation(config);
  if (!allocatable.ok()) return allocatable.status();
  spec->allocatable_reservation = *std::move(allocatable);
  return absl::OkStatus();
}

std::vector<device::DevicePoolConfig> ConvertDevicePools(const Config& config) {
  std::vector<device::DevicePoolConfig> pools;
  for (const DevicePoolConfig& in : config.devices) {
    device::DevicePoolConfig out;
    out.resource_name = in.resource_name;
    if (in.pci.has_value()) {
      out.pci = device::PciMatch{.vendor = in.pci->vendor,
                                 .device = in.pci->device,
                                 .class_id = in.pci->class_id,
                                 .virtual_functions = in.pci->virtual_functions};
    }
    for (const ExplicitDeviceConfig& d : in.devices) {
      out.devices.push_back(device::ExplicitDevice{.id = d.id, .numa_nodes = d.numa_nodes});
    }
    pools.push_back(std::move(out));
  }
  return pools;
}

}  // namespace

absl::StatusOr<admission::NodeSpec> ParseNodeSpec(const Config& config) {
  admission::NodeSpec spec;
  spec.pod_policy_override = config.pod_policy_override;
  // Each key is checked on its own, so that one run names every bad key, not the first.
  KeyProblems problems;
  auto note = [&problems](const absl::Status& s) { problems.Add(s); };

  absl::StatusOr<hints::Policy> policy = hints::ParsePolicy(config.topology_manager_policy);
  if (policy.ok()) spec.policy = *policy;
  note(KeyError("topologyManagerPolicy", policy.status()));
  absl::StatusOr<admission::Scope> scope = ParseScope(config.topology_manager_scope);
  if (scope.ok()) spec.scope = *scope;
  note(KeyError("topologyManagerScope", scope.status()));
  // kubelet parses options only for a policy other than none; a pod may choose another policy
  // when the override is on, so then they must be valid too.
  if (spec.policy != hints::Policy::kNone || spec.pod_policy_override) {
    absl::StatusOr<hints::PolicyOptions> options =
        hints::ParsePolicyOptions(config.topology_manager_policy_options);
    if (options.ok()) spec.options = *options;
    note(KeyError("topologyManagerPolicyOptions", options.status()));
  }

  note(ParseCpuPolicy(config, &spec));
  note(ParseMemoryPolicy(config, &spec));
  if (!problems.empty()) return problems.ToStatus(absl::StatusCode::kInvalidArgument);
  spec.devices = ConvertDevicePools(config);
  return spec;
}

absl::StatusOr<admission::NodePolicy> BuildNodePolicy(const Config& config,
                                                      const topology::Topology& topology) {
  absl::StatusOr<admission::NodeSpec> spec = ParseNodeSpec(config);
  if (!spec.ok()) return spec.status();
  return admission::BuildNodePolicy(*spec, topology);
}

}  // namespace topologyd::config
