// MemoryState: kubelet's Memory Manager (static policy) state as a plain value — the per-NUMA
// memory table ("machine state") and the memory blocks of every container — plus its creation
// from a Topology and the `reservedMemory` setting (docs/admission.md, "Memory and hugepages":
// "The table"; validateState under "Allocation and groups").
//
// Field names and meanings follow kubelet's memory_manager_state checkpoint, so the
// state layer can persist this value in kubelet's layout: NUMA nodes and block affinities are
// NUMA *OS ids*; the position of a node (its bit in hints::NumaMask) is its index in
// `machine_state`, which is ordered by id exactly like Topology::numa_nodes.
//
// `init_reusable` is kubelet's in-memory initContainersReusableMemory (memory of finished init
// containers that app containers of the same pod may take over); kubelet does not checkpoint
// it, so a restarted kubelet forgets it. Persisting it is harmless but not required.
//
// Topology::NumaNode::memory_bytes is taken to be the node's MemTotal including its hugepage
// pools, as cadvisor reports it; regular-memory allocatable subtracts the pools.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/topology/topology.h"

namespace topologyd::memory {

inline constexpr std::string_view kMemory = "memory";

// Bytes of one memory type on one NUMA node.
struct MemoryTable {
  uint64_t total = 0;            // memory: MemTotal; hugepages: pages * page size
  uint64_t system_reserved = 0;  // from reservedMemory
  uint64_t allocatable = 0;      // total - reserved (- hugepage pools for memory)
  uint64_t reserved = 0;         // assigned to containers
  uint64_t free = 0;             // allocatable - reserved
  friend bool operator==(const MemoryTable&, const MemoryTable&) = default;
};

struct NumaNodeState {
  int number_of_assignments = 0;  // blocks pinned to this node (memory and hugepages count apart)
  std::map<std::string, MemoryTable, std::less<>> memory_map;  // "memory", "hugepages-2Mi", ...
  std::vector<int> cells;  // the node's group: {self}, or the mask of its multi-NUMA allocation
  friend bool operator==(const NumaNodeState&, const NumaNodeState&) = default;
};

struct Block {
  std::vector<int> numa_affinity;  // NUMA OS ids, ascending
  std::string type;                // "memory" or "hugepages-<size>"
  uint64_t size = 0;               // bytes
  friend bool operator==(const Block&, const Block&) = default;
};

using ContainerBlocks = std::map<std::string, std::vector<Block>, std::less<>>;

struct MemoryState {
  std::map<int, NumaNodeState> machine_state;                       // by NUMA OS id
  std::map<std::string, ContainerBlocks, std::less<>> assignments;  // pod uid -> container
  // pod uid -> NUMA ids of a block -> resource -> bytes (one pod at a time, as kubelet).
  std::map<std::string, std::map<std::vector<int>, std::map<std::string, uint64_t>>, std::less<>>
      init_reusable;
  friend bool operator==(const MemoryState&, const MemoryState&) = default;
};

// One `reservedMemory` entry: bytes per resource ("memory", "hugepages-1Gi") kept back on a
// NUMA node (OS id).
struct ReservedMemory {
  int numa_node = 0;
  std::map<std::string, uint64_t> limits;
  friend bool operator==(const ReservedMemory&, const ReservedMemory&) = default;
};

// kubelet's resource name for a hugepage size: "hugepages-" + the canonical binary-SI quantity
// of the page size in bytes (2048 KiB -> "hugepages-2Mi", 1048576 KiB -> "hugepages-1Gi",
// 64 KiB -> "hugepages-64Ki").
std::string HugePageResourceName(uint64_t size_kib);

// The checks kubelet makes at start for the Static policy, INVALID_ARGUMENT naming the
// entry: every numaNode exists; a node is listed once; resources are `memory` or
// `hugepages-<size>` with a size the node has; limits are non-zero and not above the node's total
// of that type; and the total `memory` reservation is non-zero (kubelet: "[memorymanager] you
// should specify the system reserved memory"). The rule that the per-NUMA sums equal the
// node-allocatable reservation is ValidateReservedTotals().
absl::Status ValidateReservedMemory(const std::vector<ReservedMemory>& reserved,
                                    const topology::Topology& topology);

// kubelet's check that the reservations agree with Node Allocatable: for
// `memory` and every hugepage type named on either side, the sum over the NUMA nodes of
// `reserved` must equal `node_allocatable`'s bytes for that type (kube-reserved +
// system-reserved + the hard eviction threshold, as kubelet derives them; other resource names
// there are ignored). INVALID_ARGUMENT in kubelet's words otherwise, amounts in bytes.
absl::Status ValidateReservedTotals(const std::vector<ReservedMemory>& reserved,
                                    const std::map<std::string, uint64_t>& node_allocatable);

// The default machine state: one table per NUMA node, `memory` plus each hugepage size
// the node lists, nothing assigned. Validates `reserved` first.
absl::StatusOr<MemoryState> NewMemoryState(const topology::Topology& topology,
                                           const std::vector<ReservedMemory>& reserved);

// kubelet's validateState for a stored state: replays `stored.assignments` onto the
// default state of `topology` + `reserved` and compares node count, assignments, groups, and
// per resource total / systemReserved / allocatable and the free / reserved sums per group.
// FAILED_PRECONDITION "[memorymanager] the expected machine state is different from the real
// one" (or the replay's own kubelet message) on any difference.
absl::Status ValidateMemoryState(const MemoryState& stored, const topology::Topology& topology,
                                 const std::vector<ReservedMemory>& reserved);

}  // namespace topologyd::memory
