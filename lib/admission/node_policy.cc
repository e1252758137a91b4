#include "lib/admission/node_policy.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/key_status.h"
#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/policy_options.h"
#include "lib/hints/merge.h"
#include "lib/memory/memory_state.h"

namespace topologyd::admission {
namespace {

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

absl::StatusOr<std::optional<cpu::StaticPolicy>> BuildCpuPolicy(const NodeSpec& spec,
                                                                const topology::Topology& machine,
                                                                std::string_view tm_policy) {
  if (spec.cpu_policy == CpuManagerPolicy::kNone) return std::optional<cpu::StaticPolicy>();
  const cpu::StaticPolicyOptions& options = spec.cpu_options;
  cpu::CpuTopology cpus = cpu::FromTopology(machine);
  absl::Status fits = cpu::ValidateStaticPolicyOptionsForMachine(options, cpus, tm_policy);
  if (!fits.ok()) return KeyError("cpuManagerPolicyOptions", fits);

  CpuSet reserved;
  std::string_view reserved_key;
  if (spec.reserved_system_cpus.has_value() && spec.cpu_reserved_count.has_value()) {
    return KeyInvalid("reservedSystemCPUs",
                      "set either reservedSystemCPUs or cpuReservedCount, not both");
  }
  if (spec.reserved_system_cpus.has_value()) {
    reserved_key = "reservedSystemCPUs";
    const CpuSet& listed = *spec.reserved_system_cpus;
    // kubelet's static policy needs a reserved CPU: without one the shared pool can be handed
    // out whole, leaving shared containers unpinned and a state kubelet refuses to restore.
    if (listed.IsEmpty()) {
      return KeyInvalid(reserved_key,
                        "is empty; cpuManagerPolicy static needs at least one reserved CPU (as "
                        "kubelet does); list them, or use a positive cpuReservedCount");
    }
    // StaticPolicy::Create only checks the CPUs are in its (NUMA-homed) map; say plainly when
    // the machine does not have them at all.
    const CpuSet missing = listed.Difference(machine.AllCpus());
    if (!missing.IsEmpty()) {
      return KeyInvalid(reserved_key,
                        fmt::format("CPUs {} do not exist on this machine (it has {})",
                                    missing.ToString(), machine.AllCpus().ToString()));
    }
    reserved = listed;
  } else {
    reserved_key = "cpuReservedCount";
    std::optional<int64_t> millis;
    if (spec.cpu_reserved_count.has_value()) millis = int64_t{*spec.cpu_reserved_count} * 1000;
    absl::StatusOr<int> count = cpu::ReservedCpuCount(millis);
    if (!count.ok()) {
      return KeyInvalid(reserved_key,
                        fmt::format("{} (cpuManagerPolicy static needs reservedSystemCPUs or a "
                                    "positive cpuReservedCount)",
                                    count.status().message()));
    }
    // kubelet's text for a count above the machine's CPUs names the empty set the allocator
    // returned ("size of  did not equal 64"); say what it means instead.
    if (*count > cpus.Cpus().Size()) {
      return KeyInvalid(reserved_key,
                        fmt::format("cannot reserve {} CPUs: this machine has {} (CPUs {})", *count,
                                    cpus.Cpus().Size(), cpus.Cpus().ToString()));
    }
    absl::StatusOr<CpuSet> chosen = cpu::ReservedCpusFromCount(cpus, options, *count);
    if (!chosen.ok()) return KeyError(reserved_key, chosen.status());
    reserved = *chosen;
  }
  absl::StatusOr<cpu::StaticPolicy> policy =
      cpu::StaticPolicy::Create(std::move(cpus), options, reserved);
  if (!policy.ok()) return KeyError(reserved_key, policy.status());
  return std::optional<cpu::StaticPolicy>(*std::move(policy));
}

}  // namespace
std::string_view ScopeName(Scope scope) { return scope == Scope::kPod ? "pod" : "container"; }

// The topology manager's limits on this machine, for a node that merges hints at all.
absl::Status CheckTopologyManager(const NodePolicy& node) {
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
    return KeyInvalid("topologyManagerPolicyOptions",
                      "prefer-closest-numa-nodes needs NUMA distances, which this machine does "
                      "not report");
  }
  return absl::OkStatus();
}

// The CPU manager's policy and its empty state, into `node`.
absl::Status BuildCpu(const NodeSpec& spec, const topology::Topology& topology, NodePolicy& node) {
  absl::StatusOr<std::optional<cpu::StaticPolicy>> cpu_policy =
      BuildCpuPolicy(spec, topology, hints::PolicyName(node.policy));
  if (!cpu_policy.ok()) return cpu_policy.status();
  node.cpu = *std::move(cpu_policy);
  if (!node.cpu.has_value()) {
    node.empty_state.cpu.default_cpu_set = node.all_cpus;
    return absl::OkStatus();
  }
  absl::StatusOr<cpu::CpuState> fresh = node.cpu->Start(cpu::CpuState{});
  if (!fresh.ok()) return KeyError("cpuManagerPolicy", fresh.status());
  node.empty_state.cpu = *std::move(fresh);
  return absl::OkStatus();
}

// The memory manager's reserved memory and empty state, into `node`.
absl::Status BuildMemory(const NodeSpec& spec, const topology::Topology& topology,
                         NodePolicy& node) {
  if (spec.memory_policy != MemoryManagerPolicy::kStatic) return absl::OkStatus();
  node.memory_static = true;
  node.reserved_memory = spec.reserved_memory;
  absl::StatusOr<memory::MemoryState> mem = memory::NewMemoryState(topology, node.reserved_memory);
  if (!mem.ok()) return KeyError("reservedMemory", mem.status());
  node.empty_state.memory = *std::move(mem);
  // After the entries themselves are known to be valid, as kubelet checks them.
  if (spec.allocatable_reservation) {
    if (absl::Status totals =
            memory::ValidateReservedTotals(node.reserved_memory, *spec.allocatable_reservation);
        !totals.ok()) {
      return KeyError("reservedMemory", totals);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<NodePolicy> BuildNodePolicy(const NodeSpec& spec,
                                           const topology::Topology& topology) {
  NodePolicy node;
  node.topology = std::make_shared<const topology::Topology>(topology);
  std::vector<int> numa_ids;
  for (const topology::NumaNode& n : topology.numa_nodes) numa_ids.push_back(n.id);
  node.numa = hints::NumaIndex(std::move(numa_ids));
  node.distances = DistanceMatrix(topology);
  node.all_cpus = topology.AllCpus();
  node.pod_policy_override = spec.pod_policy_override;
  node.policy = spec.policy;
  node.scope = spec.scope;

  // The managers are checked independently, so one run reports every problem the machine
  // finds in the configuration, one line each.
  KeyProblems problems;
  // A pod may choose another policy when the override is on, so the limits apply then too.
  if (node.policy != hints::Policy::kNone || node.pod_policy_override) {
    node.options = spec.options;
    problems.Add(CheckTopologyManager(node));
  }
  problems.Add(BuildCpu(spec, topology, node));
  problems.Add(BuildMemory(spec, topology, node));
  absl::StatusOr<device::DeviceInventory> devices =
      device::BuildDeviceInventory(spec.devices, topology, node.numa);
  if (devices.ok()) {
    node.devices = *std::move(devices);
  } else {
    problems.Add(KeyError("devices", devices.status()));
  }
  if (!problems.empty()) return problems.ToStatus();
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
