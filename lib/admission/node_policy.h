// NodePolicy: everything admission needs to know about the node that does not change from pod
// to pod — the machine, the topology manager policy/scope/options, the static CPU policy with
// its reserved CPUs, the memory manager policy with its reserved memory, and the device pools —
// built once from a typed NodeSpec and a Topology, and validated on the way.
//
// BuildNodePolicy() is also the semantic half of `topologyd --check-config`: the config module
// parses the values into a NodeSpec (option names and compatibility, quantities); this checks
// that they make sense together and on this machine (reserved CPUs that exist, option limits,
// reserved memory that fits, device pools that resolve). Every error names the config key it
// is about.
//
// AllocationState: the three providers' states as one value. Admission takes one and returns a
// new one; nothing is shared or mutated, so a failed admission leaves the caller's value as it
// was (all-or-nothing by construction).
//
// Thread-safety: NodePolicy is immutable after BuildNodePolicy(); share it const. AllocationState
// is a plain value.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/admission/node_spec.h"
#include "lib/cpu/static_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/device/device_pool.h"
#include "lib/device/device_state.h"
#include "lib/hints/numa_index.h"
#include "lib/hints/policy.h"
#include "lib/memory/memory_state.h"
#include "lib/topology/topology.h"

namespace topologyd::admission {

struct AllocationState {
  cpu::CpuState cpu;           // with cpuManagerPolicy none: pool = every CPU, no assignments
  memory::MemoryState memory;  // with memoryManagerPolicy None: empty
  device::DeviceState devices;
  friend bool operator==(const AllocationState&, const AllocationState&) = default;
};

struct NodePolicy {
  std::shared_ptr<const topology::Topology> topology;
  // NUMA positions (hint masks) and OS ids (everything else), translated here only.
  hints::NumaIndex numa;
  // Position-indexed distance matrix for prefer-closest-numa-nodes; empty when unknown.
  std::vector<std::vector<double>> distances;

  // Topology manager (topologyManagerPolicy / Scope / PolicyOptions).
  hints::Policy policy = hints::Policy::kNone;
  Scope scope = Scope::kContainer;
  hints::PolicyOptions options;
  // podPolicyOverride: honour the topologyd.io/topology-policy and -scope annotations.
  bool pod_policy_override = false;

  // cpuManagerPolicy static: the policy (reserved CPUs included); nullopt for none.
  std::optional<cpu::StaticPolicy> cpu;
  // Every CPU of the machine: the "shared pool" of every container under policy none.
  CpuSet all_cpus;

  // memoryManagerPolicy Static: true; reservedMemory in bytes.
  bool memory_static = false;
  std::vector<memory::ReservedMemory> reserved_memory;

  // devices: the resolved pools (always present; no pools = nothing to manage).
  device::DeviceInventory devices;

  // The state of a node with nothing admitted (CPU pool = all CPUs, minus reserved with
  // strict-cpu-reservation; memory tables at allocatable; no devices held).
  AllocationState empty_state;

  int num_nodes() const { return numa.size(); }
};

// Builds and validates the node policy. INVALID_ARGUMENT (or FAILED_PRECONDITION for a machine
// the configuration cannot run on, e.g. more NUMA nodes than max-allowable-numa-nodes; the
// first problem's code) with one line per problem, the topology, CPU and memory managers and
// the device pools each checked, every line starting with the config key, e.g.
//   cpuManagerPolicyOptions: Topolgy manager single-numa-node policy is incompatible with ...
//   reservedSystemCPUs: [cpumanager] unable to build the reserved physical CPUs ...
//   reservedMemory: ...
//   devices: devices[0] (nvidia.com/gpu): ...
// Rules beyond kubelet's: cpuManagerPolicy static needs reservedSystemCPUs or cpuReservedCount
// (kubelet derives the count from kube/system-reserved, which topologyd does not have);
// setting both is refused; with podPolicyOverride the NUMA limit is checked even when the node
// policy is none (a pod may ask for another policy).
[[nodiscard]] absl::StatusOr<NodePolicy> BuildNodePolicy(const NodeSpec& spec,
                                                         const topology::Topology& topology);

// What is valid but probably not meant, one message per finding: a device pool whose `pci`
// match found no device on this machine (every pod requesting it would be refused).
std::vector<std::string> NodePolicyWarnings(const NodePolicy& policy);

}  // namespace topologyd::admission
