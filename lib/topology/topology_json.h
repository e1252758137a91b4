// Renderings of a Topology for people and scripts: the JSON object of `topoctl topology
// --output json` (a contract, docs/cli.md, `topology`) and a plain-text table.
//
// JSON shape (field names and value spellings are relied on by scripts; extend only
// compatibly):
//   {"packages": N, "cores": N, "cpus": N,
//    "numa_nodes": [{"id": OS_INDEX, "cpus": "LIST", "memory_bytes": N,
//                    "hugepages": [{"size_kib": N, "count": N}], "distances": [N, ...]}],
//    "l3_groups": ["LIST", ...],
//    "pci_devices": [{"busid": "0000:3b:00.0", "vendor_id": "10de", "device_id": "1db4",
//                     "class_id": "0302", "kind": "gpu|network|storage|accelerator|other",
//                     "numa_nodes": [OS_INDEX, ...]}]}
// CPU lists use Linux list syntax; CPU-less nodes have "cpus": "". Hex ids are 4 lower-case
// digits without "0x". Arrays follow the model's order (sorted by id / bus id).
//
// Pure functions; thread-compatible.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

#include "lib/topology/topology.h"

namespace topologyd::topology {

nlohmann::json TopologyToJson(const Topology& topology);

// A summary line, then one block per NUMA node: CPUs, memory, huge pages, distances and the
// PCI devices local to it, then devices with no known locality. Ends with a newline.
std::string TopologyToTable(const Topology& topology);

// "10de": 4 lower-case hex digits, no prefix.
std::string HexId(uint16_t id);

}  // namespace topologyd::topology
