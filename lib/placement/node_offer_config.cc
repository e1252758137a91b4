#include "lib/placement/node_offer_config.h"

#include "lib/config/node_policy_config.h"

namespace topologyd::placement {

absl::StatusOr<NodeOffer> NodeOfferFromConfig(const config::Config& config,
                                              const topology::Topology& topology) {
  absl::StatusOr<admission::NodePolicy> policy = config::BuildNodePolicy(config, topology);
  if (!policy.ok()) return policy.status();
  NodeOffer offer;
  offer.cpus_pinnable = policy->cpu.has_value();
  if (policy->cpu.has_value()) {
    offer.reserved_cpus = policy->cpu->reserved();
  } else if (config.reserved_system_cpus.has_value()) {
    // The CPU manager does not read the key under policy none; the tree still reserves them.
    absl::StatusOr<CpuSet> reserved = CpuSet::Parse(*config.reserved_system_cpus);
    if (!reserved.ok()) {
      return absl::InvalidArgumentError("reservedSystemCPUs: " +
                                        std::string(reserved.status().message()));
    }
    offer.reserved_cpus = *reserved;
  }
  offer.reserved_memory = policy->reserved_memory;
  for (const config::DevicePoolConfig& pool : config.devices) {
    if (!pool.pci.has_value()) continue;
    offer.device_selectors.push_back(
        device::PciMatch{.vendor = pool.pci->vendor,
                         .device = pool.pci->device,
                         .class_id = pool.pci->class_id,
                         .virtual_functions = pool.pci->virtual_functions});
  }
  return offer;
}

}  // namespace topologyd::placement
