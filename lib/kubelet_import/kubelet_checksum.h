// Kubelet's checkpoint checksums, reproduced.
//
// Legacy checksum: FNV-1a (32 bit) over the go-spew `%#v` rendering of the checkpoint value
// (k8s.io/utils/dump.ForHash settings), with the checksum field set to 0. The rendering prints
// each struct field as `Name:(gotype)value`, strings raw, maps as `map[k:v ...]` with sorted
// keys, slices as `[a b]`, nil maps/slices/pointers as `<nil>` and pointers inside maps as `<*>`
// followed by the struct body. Type names are those of the kubelet version that wrote the file.
//
// Data-string checksum (newer formats): FNV-1a-32 of "(string)" followed by the raw `data`
// string.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lib/kubelet_import/kubelet_checkpoints.h"

namespace topologyd::state::kubelet {

uint32_t Fnv1a32(std::string_view data);

// The spew text kubelet hashes for cpu_manager_state (checksum field rendered as 0).
std::string SpewCpuCheckpoint(const CpuCheckpoint& checkpoint);

// The spew text for memory_manager_state: `with_pod_entries` selects the V2 struct layout
// (a PodEntries field before Checksum) over V1.
std::string SpewMemoryCheckpoint(const MemoryCheckpoint& checkpoint, bool with_pod_entries);

// The spew text for kubelet_internal_checkpoint's `Data` (the checksum covers only that).
std::string SpewDeviceData(const DeviceCheckpoint& checkpoint);

// Fnv1a32("(string)" + data).
uint32_t DataStringChecksum(std::string_view data);

}  // namespace topologyd::state::kubelet
