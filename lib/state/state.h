// The allocation state topologyd keeps across restarts: which pod's containers hold which
// exclusive CPUs, which memory (per NUMA node and resource) and which devices.
//
// These are plain value types. The admission layer maps its results into them; the checkpoint
// codec (checkpoint_codec.h) turns them into bytes; the store (file_store.h) makes those bytes
// durable. Free pools are never stored: they are recomputed from these records and the
// topology at start-up, so a State only says what is taken, and by whom.
//
// Pods imported from kubelet's checkpoints carry only a uid and container names: namespace,
// name and qos are then empty and stay empty until the pod is admitted again.
//
// Values; no internal synchronisation. Copy freely, share const.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "lib/cpuset/cpuset.h"

namespace topologyd::state {

// One container's share of the node: the one type for what a container holds, whoever shows
// it: the checkpoint, admission's results and Explain, the ledger's and the engine's answers,
// the API.
struct ContainerRecord {
  std::string name;
  bool init = false;  // an init container (its exclusive CPUs may be reused by app containers)
  // A restartable init container (a sidecar, restartPolicy Always); only ever set with `init`.
  // Sidecars keep running beside the app containers, other init containers finish first.
  bool restartable = false;
  // The CPUs the container runs on. With `exclusive`, no other container may hold them;
  // otherwise this is the shared pool at the time of admission (informational): the ledger's
  // answers show the pool as it is now instead.
  CpuSet cpus;
  bool exclusive = false;
  // The NUMA nodes (OS ids) the topology manager aligned the container to; empty = unknown or
  // no alignment (e.g. imported CPU-only assignments).
  std::vector<int> numa_affinity;
  // Bytes taken per NUMA node (OS id) and resource ("memory", "hugepages-2Mi", ...).
  std::map<int, std::map<std::string, uint64_t>> memory;
  // Device ids per extended resource name ("nvidia.com/gpu" -> {"GPU-a", ...}), in the order
  // they were allocated.
  std::map<std::string, std::vector<std::string>> devices;
  // Filled in when the runtime reports the created container (Allocate); empty before.
  std::string container_id;
  std::string cgroup;

  friend bool operator==(const ContainerRecord&, const ContainerRecord&) = default;
};

struct PodRecord {
  std::string uid;
  std::string namespace_name;  // "namespace" in JSON
  std::string name;
  std::string qos;  // "Guaranteed", "Burstable", "BestEffort"; empty when unknown
  std::vector<ContainerRecord> containers;

  friend bool operator==(const PodRecord&, const PodRecord&) = default;
};

struct State {
  // Incremented by the engine for every committed change; 0 for a state never saved.
  uint64_t generation = 0;
  std::map<std::string /*uid*/, PodRecord> pods;

  friend bool operator==(const State&, const State&) = default;
};

// The union of every exclusive container's CPUs.
CpuSet ExclusiveCpus(const State& state);

// The container record named `container` of pod `uid`, or nullptr.
const ContainerRecord* FindContainer(const State& state, const std::string& uid,
                                     const std::string& container);

// The NUMA nodes (OS ids, ascending) of the container's memory: its cpuset.mems. Empty without
// memory blocks: do not restrict.
std::vector<int> MemoryNodes(const ContainerRecord& container);

// Total bytes taken per NUMA node and resource, summed over every container.
std::map<int, std::map<std::string, uint64_t>> MemoryInUse(const State& state);

// Checks the invariants a State must keep whatever its origin: every pod's map key equals its
// uid, container names are unique within a pod, and no CPU is held exclusively, nor a device id
// of one resource given, to two containers that can run at the same time: containers of two
// pods, or two of one pod unless the one that starts first (init containers first, in recorded
// order) is a regular init container, which exits before the next one starts (kubelet passes
// its CPUs and devices on). Pods imported from kubelet (no QoS class) do not say which
// containers were init containers, so only the first rule applies to them.
// FAILED_PRECONDITION names the two holders of a conflicting CPU or device; INVALID_ARGUMENT for
// the others.
absl::Status Validate(const State& state);

}  // namespace topologyd::state
