// Kubelet's resource-manager checkpoints, read the way kubelet reads them.
//
// Three files, all written by kubelet's checkpoint manager (JSON plus a checksum):
//  - cpu_manager_state (CPU Manager): policy, shared pool and each container's exclusive CPUs;
//  - memory_manager_state (Memory Manager): policy, per-NUMA memory table and each container's
//    memory blocks;
//  - device-plugins/kubelet_internal_checkpoint (Device Manager): each container's device ids
//    per NUMA node.
//
// The structs below mirror kubelet's Go structs field by field, including the difference
// between a nil and an empty map or slice (std::nullopt vs. empty), because kubelet's legacy
// checksum is an FNV-1a hash over go-spew's rendering of those values, where `<nil>` and
// `map[]` differ. The parsers follow encoding/json: struct member names match
// case-insensitively, unknown members are ignored, `null` leaves scalars at their zero value
// and makes maps/slices/pointers nil. Numbers must be integers of the field's range.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace topologyd::state::kubelet {

// ---- cpu_manager_state (state.CPUManagerCheckpoint, format V2) ----
struct CpuCheckpoint {
  std::string policy_name;      // "none" | "static"
  std::string default_cpu_set;  // the shared pool, Linux list syntax
  // podUID -> container name -> exclusive CPU list.
  std::optional<std::map<std::string, std::optional<std::map<std::string, std::string>>>> entries;
  uint64_t checksum = 0;
};

// ---- memory_manager_state (state.MemoryManagerCheckpoint, formats V1..V3) ----
struct MemoryTable {
  uint64_t total = 0;  // TotalMemSize
  uint64_t system_reserved = 0;
  uint64_t allocatable = 0;
  uint64_t reserved = 0;
  uint64_t free = 0;
};
struct NumaNodeState {
  int64_t number_of_assignments = 0;
  std::optional<std::map<std::string, std::optional<MemoryTable>>> memory_map;
  std::optional<std::vector<int64_t>> cells;
};
struct MemoryBlock {
  std::optional<std::vector<int64_t>> numa_affinity;
  std::string type;  // "memory", "hugepages-2Mi", ...
  uint64_t size = 0;
};
using OptionalBlocks = std::optional<std::vector<MemoryBlock>>;
struct PodMemoryEntry {
  OptionalBlocks memory_blocks;
};
struct MemoryCheckpoint {
  std::string policy_name;  // "None" | "Static"
  std::optional<std::map<int64_t, std::optional<NumaNodeState>>> machine_state;
  // podUID -> container name -> blocks.
  std::optional<std::map<std::string, std::optional<std::map<std::string, OptionalBlocks>>>>
      entries;
  // Pod-level blocks (kubelet 1.36+, PodLevelResourceManagers).
  std::optional<std::map<std::string, PodMemoryEntry>> pod_entries;
  uint64_t checksum = 0;
};

// ---- kubelet_internal_checkpoint (checkpoint.Data, format of kubelet 1.20 and later) ----
struct PodDevicesEntry {
  std::string pod_uid;
  std::string container_name;
  std::string resource_name;
  // NUMA node id (-1: no topology) -> device ids. A device on several nodes is under each.
  std::optional<std::map<int64_t, std::optional<std::vector<std::string>>>> device_ids;
  std::optional<std::string> alloc_resp;  // decoded bytes of the plugin's AllocateResponse
};
struct DeviceCheckpoint {
  std::optional<std::vector<PodDevicesEntry>> pod_device_entries;
  std::optional<std::map<std::string, std::optional<std::vector<std::string>>>> registered_devices;
  uint64_t checksum = 0;
};

// Each parser reads the file's bytes and verifies its checksum as kubelet does. `source` names
// the file in messages. Errors:
//  - DATA_LOSS: not JSON, arrays or objects nested deeper than kMaxJsonNesting
//    (json_limits.h), a member of the wrong type (its JSON path is named), or a checksum
//    mismatch ("checkpoint is corrupted" in kubelet's words);
//  - FAILED_PRECONDITION: a format this importer does not read (named, with what to do).
//
// cpu_manager_state: checksum 0 is accepted unchecked, as kubelet does. A pre-1.18 file
// (entries keyed by container id) is refused: it needs the container runtime to migrate.
[[nodiscard]] absl::StatusOr<CpuCheckpoint> ParseCpuCheckpoint(std::string_view bytes,
                                                               std::string_view source);
// memory_manager_state: V1 and V2 (legacy checksum: either struct layout is accepted, as
// kubelet's two readers do; 0 is accepted unchecked) and V3 (the `data` string with its
// `dataChecksum`, which alone is checked).
[[nodiscard]] absl::StatusOr<MemoryCheckpoint> ParseMemoryCheckpoint(std::string_view bytes,
                                                                     std::string_view source);
// kubelet_internal_checkpoint: the checksum covers `Data` only. The pre-1.20 layout
// (DeviceIDs as a plain list) is refused.
[[nodiscard]] absl::StatusOr<DeviceCheckpoint> ParseDeviceCheckpoint(std::string_view bytes,
                                                                     std::string_view source);

}  // namespace topologyd::state::kubelet
