// The NodeOffer (mapping.h) of a topologyd configuration on a machine: the node policy is built
// and validated as the daemon builds it, then its reserved CPUs, reserved memory and the `pci`
// selectors of its device pools are what the provider tree reserves and offers.
#pragma once

#include "absl/status/statusor.h"

#include "lib/config/config.h"
#include "lib/placement/mapping.h"
#include "lib/topology/topology.h"

namespace topologyd::placement {

// Errors of config::BuildNodePolicy(), and of reservedSystemCPUs with cpuManagerPolicy none.
[[nodiscard]] absl::StatusOr<NodeOffer> NodeOfferFromConfig(const config::Config& config,
                                                            const topology::Topology& topology);

}  // namespace topologyd::placement
