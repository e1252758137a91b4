// What the kubelet's PodResources v1 API says about this node, computed from topologyd's
// allocations and node policy the way the kubelet fills it from its CPU, Memory and Device
// managers (docs/api.md, "PodResources"). Plain values shaped like the API's messages; the
// service (pod_resources_service.h) only copies them into protobuf.
//
// Pure functions of one ledger::Allocations and the NodePolicy it was made under.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/admission/node_policy.h"
#include "lib/ledger/ledger.h"

namespace topologyd::podresources {

// One ContainerDevices entry. The kubelet sends one entry per (device, NUMA node): a device
// on two nodes appears twice, and a device without locality once, without topology.
struct DeviceEntry {
  std::string resource_name;
  std::string device_id;
  std::optional<int> numa_node;  // OS id; nullopt: no topology
  friend bool operator==(const DeviceEntry&, const DeviceEntry&) = default;
};

// One ContainerMemory entry: a memory manager block.
struct MemoryBlock {
  std::string type;             // "memory" or "hugepages-<size>"
  uint64_t size = 0;            // bytes
  std::vector<int> numa_nodes;  // the block's NUMA affinity, OS ids ascending
  friend bool operator==(const MemoryBlock&, const MemoryBlock&) = default;
};

struct ContainerResources {
  std::string name;
  std::vector<DeviceEntry> devices;
  std::vector<int64_t> cpu_ids;  // exclusive CPUs only, ascending
  std::vector<MemoryBlock> memory;
  friend bool operator==(const ContainerResources&, const ContainerResources&) = default;
};

struct PodResources {
  std::string name;
  std::string namespace_name;
  // Restartable init containers first, then app containers; regular init containers are
  // left out, as the kubelet leaves them out.
  std::vector<ContainerResources> containers;
  friend bool operator==(const PodResources&, const PodResources&) = default;
};

struct AllocatableResources {
  std::vector<DeviceEntry> devices;  // every device of every pool (all are healthy)
  std::vector<int64_t> cpu_ids;      // all CPUs minus reserved; empty with policy none
  std::vector<MemoryBlock> memory;   // per NUMA node and type; empty unless memory Static
  friend bool operator==(const AllocatableResources&, const AllocatableResources&) = default;
};

// Every admitted pod, bound to a runtime container or not (the kubelet lists the pods it
// admitted), in uid order. `policy` gives the devices' NUMA nodes.
std::vector<PodResources> ListPods(const ledger::Allocations& allocations,
                                   const admission::NodePolicy& policy);

// The admitted pod `namespace_name`/`name`; nullopt when none is. Should two admitted pods
// share the name (a pod recreated before the old one was released), the one of the lowest
// uid.
std::optional<PodResources> FindPod(const ledger::Allocations& allocations,
                                    const admission::NodePolicy& policy,
                                    std::string_view namespace_name, std::string_view name);

// The kubelet's error text for Get of a pod it does not know.
std::string PodNotFoundMessage(std::string_view namespace_name, std::string_view name);

AllocatableResources Allocatable(const admission::NodePolicy& policy);

}  // namespace topologyd::podresources
