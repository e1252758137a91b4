// NodeSpec: the node's configuration as typed values — what BuildNodePolicy() needs besides
// the machine. The config module fills it from YAML (lib/config/node_policy_config.h), so
// admission parses no text and depends on no configuration file format.
//
// Everything here is already syntactically valid; what depends on the machine (reserved CPUs
// that exist, option limits, memory that fits, device pools that resolve) is BuildNodePolicy's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/cpu/policy_options.h"
#include "lib/cpuset/cpuset.h"
#include "lib/device/device_pool.h"
#include "lib/hints/policy.h"
#include "lib/memory/memory_state.h"

namespace topologyd::admission {

enum class Scope { kContainer, kPod };
// "container" or "pod".
std::string_view ScopeName(Scope scope);

enum class CpuManagerPolicy { kNone, kStatic };
enum class MemoryManagerPolicy { kNone, kStatic };

struct NodeSpec {
  // Topology manager (topologyManagerPolicy / Scope / PolicyOptions). The options are only
  // read when some merge can happen: a policy other than none, or podPolicyOverride.
  hints::Policy policy = hints::Policy::kNone;
  Scope scope = Scope::kContainer;
  hints::PolicyOptions options;
  // podPolicyOverride: honour the topologyd.io/topology-policy and -scope annotations.
  bool pod_policy_override = false;

  // cpuManagerPolicy with its options (static only); the reservation is reservedSystemCPUs or
  // cpuReservedCount, at most one of them set (both is refused, naming reservedSystemCPUs).
  CpuManagerPolicy cpu_policy = CpuManagerPolicy::kNone;
  cpu::StaticPolicyOptions cpu_options;
  std::optional<CpuSet> reserved_system_cpus;
  std::optional<int> cpu_reserved_count;

  // memoryManagerPolicy; reservedMemory in bytes (Static only).
  MemoryManagerPolicy memory_policy = MemoryManagerPolicy::kNone;
  std::vector<memory::ReservedMemory> reserved_memory;
  // Node Allocatable's reservation of memory types in bytes (kubeReserved + systemReserved +
  // the hard eviction threshold), which reservedMemory must match; nullopt: not checked.
  std::optional<std::map<std::string, uint64_t>> allocatable_reservation;

  // devices: the pools as configured, resolved against the machine by BuildNodePolicy.
  std::vector<device::DevicePoolConfig> devices;
};

}  // namespace topologyd::admission
