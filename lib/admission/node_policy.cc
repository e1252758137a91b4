#include "lib/admission/node_policy.h"

#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "lib/common/absl_fmt.h"
#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/policy_options.h"
#include "lib/hints/merge.h"
#include "lib/memory/memory_state.h"
#include "lib/pod/quantity.h"

#include "fmt/format.h"

namespace topologyd::admission {
namespace {

// Prefixes a library error with the config key it concerns, keeping its code.
absl::Status KeyError(std::string_view key, const absl::Status& status) {
  return absl::Status(status.code(), fmt::format("{}: {}", key, status.message()));
}

absl::Status Invalid(std::string_view key, std::string_view text) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", key, text));
}

absl::StatusOr<Scope> ParseScope(std::string_view name) {
  if (name == "container") return Scope::kContainer;
  if (name == "pod") return Scope::kPod;
  // kubelet's text for an unknown scope.
  return absl::InvalidArgumentError(fmt::format("unknown scope: \"{}\"", name));
}

std::vector<std::vector<double>> DistanceMatrix(const topology::Topology& topology) {
  const size_t n = topology.numa_nodes.size();
  std::vector<std::vector<double>> matrix;
  for (const topology::NumaNode& node : topology.numa_nodes) {
    // A machine that reports no (or partial) distances gets none: kubelet then has no
    // prefer-closest tie-break either.
    if (node.distances.size() != n) return {};
    matrix.emplace_back(node.distances.begin(), node.distances.end());
  }
  return matrix;
}

absl::StatusOr<std::optional<cpu::StaticPolicy>> BuildCpuPolicy(const config::Config& config,
                                                                const topology::Topology& machine,
                                                                std::string_view tm_policy) {
  if (config.cpu_manager_policy == "none") {
    absl::Status none = cpu::ValidateNonePolicyOptions(config.cpu_manager_policy_options);
    if (!none.ok()) return KeyError("cpuManagerPolicyOptions", none);
    return std::optional<cpu::StaticPolicy>();
  }
  if (config.cpu_manager_policy != "static") {
    return Invalid("cpuManagerPolicy",
                   fmt::format("unknown policy: \"{}\"", config.cpu_manager_policy));
  }
  absl::StatusOr<cpu::StaticPolicyOptions> options = cpu::ParseStaticPolicyOptions(
      config.cpu_manager_policy_options,
      cpu::PolicyOptionGates{.alpha_options = config.feature_gates.cpu_manager_policy_alpha_options,
                             .beta_options = config.feature_gates.cpu_manager_policy_beta_options});
  if (!options.ok()) return KeyError("cpuManagerPolicyOptions", options.status());
  cpu::CpuTopology cpus = cpu::FromTopology(machine);
  absl::Status fits = cpu::ValidateStaticPolicyOptionsForMachine(*options, cpus, tm_policy);
  if (!fits.ok()) return KeyError("cpuManagerPolicyOptions", fits);

  CpuSet reserved;
  std::string_view reserved_key;
  if (config.reserved_system_cpus.has_value() && config.cpu_reserved_count.has_value()) {
    return Invalid("reservedSystemCPUs",
                   "set either reservedSystemCPUs or cpuReservedCount, not both");
  }
  if (config.reserved_system_cpus.has_value()) {
    reserved_key = "reservedSystemCPUs";
    absl::StatusOr<CpuSet> parsed = CpuSet::Parse(*config.reserved_system_cpus);
    if (!parsed.ok()) return KeyError(reserved_key, parsed.status());
    // kubelet's static policy needs a reserved CPU: without one the shared pool can be handed
    // out whole, leaving shared containers unpinned and a state kubelet refuses to restore.
    if (parsed->IsEmpty()) {
      return Invalid(reserved_key,
                     "is empty; cpuManagerPolicy static needs at least one reserved CPU (as "
                     "kubelet does); list them, or use a positive cpuReservedCount");
    }
    // StaticPolicy::Create only checks the CPUs are in its (NUMA-homed) map; say plainly when
    // the machine does not have them at all.
    const CpuSet missing = parsed->Difference(machine.AllCpus());
    if (!missing.IsEmpty()) {
      return Invalid(reserved_key, fmt::format("CPUs {} do not exist on this machine (it has {})",
                                               missing.ToString(), machine.AllCpus().ToString()));
    }
    reserved = *parsed;
  } else {
    reserved_key = "cpuReservedCount";
    std::optional<int64_t> millis;
    if (config.cpu_reserved_count.has_value()) millis = int64_t{*config.cpu_reserved_count} * 1000;
    absl::StatusOr<int> count = cpu::ReservedCpuCount(millis);
    if (!count.ok()) {
      return Invalid(reserved_key,
                     fmt::format("{} (cpuManagerPolicy static needs reservedSystemCPUs or a "
                                 "positive cpuReservedCount)",
                                 count.status().message()));
    }
    // kubelet's text for a count above the machine's CPUs names the empty set the allocator
    // returned ("size of  did not equal 64"); say what it means instead.
    if (*count > cpus.Cpus().Size()) {
      return Invalid(reserved_key,
                     fmt::format("cannot reserve {} CPUs: this machine has {} (CPUs {})", *count,
                                 cpus.Cpus().Size(), cpus.Cpus().ToString()));
    }
    absl::StatusOr<CpuSet> chosen = cpu::ReservedCpusFromCount(cpus, *options, *count);
    if (!chosen.ok()) return KeyError(reserved_key, chosen.status());
    reserved = *chosen;
  }
  absl::StatusOr<cpu::StaticPolicy> policy =
      cpu::StaticPolicy::Create(std::move(cpus), *options, reserved);
  if (!policy.ok()) return KeyError(reserved_key, policy.status());
  return std::optional<cpu::StaticPolicy>(*std::move(policy));
}

// Bytes of a quantity at `key`: whole and non-negative, as memory amounts are.
absl::StatusOr<uint64_t> Bytes(const std::string& key, const std::string& text) {
  absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(text);
  if (!q.ok()) return KeyError(key, q.status());
  std::optional<int64_t> bytes = q->AsInt64();
  if (!bytes.has_value() || *bytes < 0) {
    return Invalid(key, fmt::format("\"{}\" is not a whole, non-negative number of bytes", text));
  }
  return static_cast<uint64_t>(*bytes);
}

absl::StatusOr<std::vector<memory::ReservedMemory>> ConvertReservedMemory(
    const config::Config& config) {
  std::vector<memory::ReservedMemory> out;
  for (size_t i = 0; i < config.reserved_memory.size(); ++i) {
    const config::ReservedMemoryConfig& entry = config.reserved_memory[i];
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
    const config::Config& config) {
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
          return Invalid(at, fmt::format("\"{}\": give memory.available as a quantity (the "
                                         "bytes kubelet reserves for it), not a percentage",
                                         text));
        }
        double percent = 0;
        const char* end = text.data() + text.size() - 1;
        if (std::from_chars(text.data(), end, percent).ptr != end || !(percent > 0) ||
            percent > 100) {
          return Invalid(
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

std::vector<device::DevicePoolConfig> ConvertDevicePools(const config::Config& config) {
  std::vector<device::DevicePoolConfig> pools;
  for (const config::DevicePoolConfig& in : config.devices) {
    device::DevicePoolConfig out;
    out.resource_name = in.resource_name;
    if (in.pci.has_value()) {
      out.pci = device::PciMatch{.vendor = in.pci->vendor,
                                 .device = in.pci->device,
                                 .class_id = in.pci->class_id,
                                 .virtual_functions = in.pci->virtual_functions};
    }
    for (const config::ExplicitDeviceConfig& d : in.devices) {
      out.devices.push_back(device::ExplicitDevice{.id = d.id, .numa_nodes = d.numa_nodes});
    }
    pools.push_back(std::move(out));
  }
  return pools;
}

}  // namespace

std::string_view ScopeName(Scope scope) { return scope == Scope::kPod ? "pod" : "container"; }

absl::StatusOr<NodePolicy> BuildNodePolicy(const config::Config& config,
                                           const topology::Topology& topology) {
  NodePolicy node;
  node.topology = std::make_shared<const topology::Topology>(topology);
  std::vector<int> numa_ids;
  for (const topology::NumaNode& n : topology.numa_nodes) numa_ids.push_back(n.id);
  node.numa = hints::NumaIndex(std::move(numa_ids));
  node.distances = DistanceMatrix(topology);
  node.all_cpus = topology.AllCpus();
  node.pod_policy_override = config.pod_policy_override;

  absl::StatusOr<hints::Policy> policy = hints::ParsePolicy(config.topology_manager_policy);
  if (!policy.ok()) return KeyError("topologyManagerPolicy", policy.status());
  node.policy = *policy;
  absl::StatusOr<Scope> scope = ParseScope(config.topology_manager_scope);
  if (!scope.ok()) return KeyError("topologyManagerScope", scope.status());
  node.scope = *scope;

  // kubelet parses options only for a policy other than none; a pod may choose another policy
  // when the override is on, so then they must be valid too.
  const bool any_merge = node.policy != hints::Policy::kNone || node.pod_policy_override;
  if (any_merge) {
    absl::StatusOr<hints::PolicyOptions> options =
        hints::ParsePolicyOptions(config.topology_manager_policy_options);
    if (!options.ok()) return KeyError("topologyManagerPolicyOptions", options.status());
    node.options = *options;
    if (node.num_nodes() > hints::NumaMask::kMaxNodes) {
      return absl::FailedPreconditionError(fmt::format(
          "topologyManagerPolicy: this machine has {} NUMA nodes; topologyd's topology manager "
          "handles at most {} (use topologyManagerPolicy: none)",
          node.num_nodes(), hints::NumaMask::kMaxNodes));
    }
    const hints::Policy checked =
        node.policy == hints::Policy::kNone ? hints::Policy::kBestEffort : node.policy;
    absl::Status limit = hints::CheckNumaNodeLimit(node.num_nodes(), checked, node.options);
    if (!limit.ok()) return KeyError("topologyManagerPolicyOptions", limit);
    if (node.options.prefer_closest_numa_nodes && node.distances.empty()) {
      return Invalid("topologyManagerPolicyOptions",
                     "prefer-closest-numa-nodes needs NUMA distances, which this machine does "
                     "not report");
    }
  }

  absl::StatusOr<std::optional<cpu::StaticPolicy>> cpu_policy =
      BuildCpuPolicy(config, topology, hints::PolicyName(node.policy));
  if (!cpu_policy.ok()) return cpu_policy.status();
  node.cpu = *std::move(cpu_policy);

  if (config.memory_manager_policy == "Static") {
    node.memory_static = true;
    absl::StatusOr<std::vector<memory::ReservedMemory>> reserved = ConvertReservedMemory(config);
    if (!reserved.ok()) return reserved.status();
    node.reserved_memory = *std::move(reserved);
  } else if (config.memory_manager_policy != "None") {
    return Invalid("memoryManagerPolicy",
                   fmt::format("unknown policy: \"{}\"", config.memory_manager_policy));
  }

  absl::StatusOr<device::DeviceInventory> devices =
      device::BuildDeviceInventory(ConvertDevicePools(config), topology);
  if (!devices.ok()) return KeyError("devices", devices.status());
  node.devices = *std::move(devices);

  // The empty state.
  if (node.cpu.has_value()) {
    absl::StatusOr<cpu::CpuState> fresh = node.cpu->Start(cpu::CpuState{});
    if (!fresh.ok()) return KeyError("cpuManagerPolicy", fresh.status());
    node.empty_state.cpu = *std::move(fresh);
  } else {
    node.empty_state.cpu.default_cpu_set = node.all_cpus;
  }
  if (node.memory_static) {
    absl::StatusOr<memory::MemoryState> mem =
        memory::NewMemoryState(topology, node.reserved_memory);
    if (!mem.ok()) return KeyError("reservedMemory", mem.status());
    node.empty_state.memory = *std::move(mem);
    // After the entries themselves are known to be valid, as kubelet checks them.
    absl::StatusOr<std::optional<std::map<std::string, uint64_t>>> allocatable =
        NodeAllocatableReservation(config);
    if (!allocatable.ok()) return allocatable.status();
    if (*allocatable) {
      if (absl::Status totals = memory::ValidateReservedTotals(node.reserved_memory, **allocatable);
          !totals.ok()) {
        return KeyError("reservedMemory", totals);
      }
    }
  }
  return node;
}

std::vector<std::string> NodePolicyWarnings(const NodePolicy& policy) {
  std::vector<std::string> warnings;
  // A pool listing its devices always has some (validation requires them), so an empty pool
  // is a `pci` match that found nothing: a typo in an id, or a node without that hardware.
  for (const auto& [resource, pool] : policy.devices.pools) {
    if (!pool.devices.empty()) continue;
    warnings.push_back(fmt::format(
        "devices: pool {} matches no PCI device on this machine; pods that request it will be "
        "refused (check its vendor/device/class ids and virtualFunctions against `topoctl "
        "topology`)",
        resource));
  }
  return warnings;
}

}  // namespace topologyd::admission
