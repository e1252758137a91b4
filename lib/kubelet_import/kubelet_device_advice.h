// Kubelet's device checkpoint records the ids its device plugins use (for NVIDIA GPUs, UUIDs
// such as GPU-4f1c...), while a topologyd `pci` pool names its devices by PCI bus id. Imported
// ids that are not bus ids are held by no `pci` pool, and the daemon refuses to start on a
// state holding devices no pool has. DevicePoolAdvice() says so before that happens, per
// resource, with the `devices:` pool entry that declares those ids: their NUMA nodes come
// from kubelet's allocations (a device only registered, not allocated, has none recorded).
//
// Pure function; thread-safe.
#pragma once

#include <string>

#include "lib/kubelet_import/kubelet_checkpoints.h"

namespace topologyd::state::kubelet {

// Empty when every device id in `cp` is a PCI bus id; otherwise a note and a YAML snippet
// for the configuration, one block per resource, each line ending in '\n'.
std::string DevicePoolAdvice(const DeviceCheckpoint& cp);

}  // namespace topologyd::state::kubelet
