// The topology document with every CPU's ids (`topoctl topology --details -o json`, docs/cli.md,
// `topology`), and the model read back from it, so that a machine can be written down once and
// decided on by topologyd and by another implementation alike (`topoctl replay`).
//
// The document is TopologyToJson's plus
//   "cpu_details": [{"id": N, "core": N, "package": N, "die": N, "numa": N, "l3": N}, ...]
//       (by CPU id; -1 for no die, no NUMA node, no L3),
//   "kubelet_test_map": BOOL.
// Packages, dies, cores and L3 groups are the groupings of cpu_details by those ids; NUMA
// nodes and PCI devices are read from their TopologyToJson entries. Not carried: NUMA
// subtypes and SR-IOV parents.
//
// Pure functions; thread-compatible.
#pragma once

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

#include "lib/topology/topology.h"

namespace topologyd::topology {

nlohmann::json TopologyDetailsToJson(const Topology& topology);

// INVALID_ARGUMENT naming the field when the document is not such a document, or when its
// cpu_details disagree with the NUMA nodes' CPU lists or the counts.
absl::StatusOr<Topology> TopologyFromDetailsJson(const nlohmann::json& document);

}  // namespace topologyd::topology
