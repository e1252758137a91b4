// Device pools: which devices back an extended resource (e.g. `nvidia.com/gpu`), and where they
// sit in the NUMA topology. This replaces what device plugins report to kubelet's Device
// Manager (docs/admission.md, "Devices: Pools"): a pool is configured either by
// matching the machine's PCI devices (vendor / device / class, physical functions or SR-IOV
// virtual functions) or by listing devices explicitly with their NUMA nodes.
//
// DevicePoolConfig is the pure configuration value (the config loader fills it);
// ValidateDevicePools() checks it against a topology; BuildDeviceInventory() resolves it into a
// DeviceInventory: every pool's devices with their NUMA nodes as OS ids and as a mask over the
// node's NUMA positions (the node's hints::NumaIndex, the one translation between the two).
//
// All devices are healthy: topologyd has no plugin health stream. A pool that matches no device
// still exists (kubelet's "registered resource with no healthy devices").
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/hints/numa_index.h"
#include "lib/hints/numa_mask.h"
#include "lib/topology/topology.h"

namespace topologyd::device {

struct PciMatch {
  std::optional<uint16_t> vendor;    // PCI vendor id, e.g. 0x10de
  std::optional<uint16_t> device;    // PCI device id
  std::optional<uint16_t> class_id;  // class+subclass, e.g. 0x0302
  // false: match physical functions and ordinary devices only; true: match SR-IOV virtual
  // functions only (devices with a physfn). A PF whose VFs are handed out should not be.
  bool virtual_functions = false;
  friend bool operator==(const PciMatch&, const PciMatch&) = default;
};

struct ExplicitDevice {
  std::string id;               // unique within the node, e.g. "GPU-3f2a..." or a bus id
  std::vector<int> numa_nodes;  // NUMA OS ids; empty = no topology ("don't care")
  friend bool operator==(const ExplicitDevice&, const ExplicitDevice&) = default;
};

struct DevicePoolConfig {
  std::string resource_name;  // extended resource name, e.g. "nvidia.com/gpu"
  std::optional<PciMatch> pci;
  std::vector<ExplicitDevice> devices;
  friend bool operator==(const DevicePoolConfig&, const DevicePoolConfig&) = default;
};

// One device of a pool. PCI devices are identified by their bus id ("0000:3b:00.0").
struct Device {
  std::string id;
  std::vector<int> numa_nodes;  // OS ids, ascending; empty = no topology
  hints::NumaMask numa_mask;    // the same nodes as positions
  friend bool operator==(const Device&, const Device&) = default;
};

struct DevicePool {
  std::string resource_name;
  std::vector<Device> devices;  // ascending id; this order is also the allocation order
  // kubelet's deviceHasTopologyAlignment: some device reports at least one NUMA node.
  bool TopologyAware() const;
  const Device* Find(std::string_view id) const;
  friend bool operator==(const DevicePool&, const DevicePool&) = default;
};

struct DeviceInventory {
  int numa_count = 0;                                    // number of NUMA positions of the machine
  std::map<std::string, DevicePool, std::less<>> pools;  // by resource name
  const DevicePool* Find(std::string_view resource) const;
  // kubelet's isDevicePluginResource: a configured resource. Other extended resources are not
  // the device provider's business (no hints, no allocation).
  bool IsDeviceResource(std::string_view resource) const { return Find(resource) != nullptr; }
  friend bool operator==(const DeviceInventory&, const DeviceInventory&) = default;
};

// Does `dev` satisfy `match`? Unset ids match anything.
bool Matches(const PciMatch& match, const topology::PciDevice& dev);

// INVALID_ARGUMENT, naming `devices[i]` and the resource, when: the resource name is not an
// extended resource name as kubelet requires of device plugins (a qualified domain/name outside
// kubernetes.io) or repeats; a pool has neither or both of `pci` and `devices`; a `pci` match
// sets no id; an explicit id is empty or repeats (within or
// across pools, or equals a PCI bus id another pool matched); an explicit NUMA node does not
// exist in `topology`; two pools match the same PCI device.
absl::Status ValidateDevicePools(const std::vector<DevicePoolConfig>& pools,
                                 const topology::Topology& topology);

// Validates, then resolves the pools against `topology`, whose NUMA nodes `numa` indexes.
absl::StatusOr<DeviceInventory> BuildDeviceInventory(const std::vector<DevicePoolConfig>& pools,
                                                     const topology::Topology& topology,
                                                     const hints::NumaIndex& numa);

}  // namespace topologyd::device
