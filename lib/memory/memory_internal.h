// Helpers shared by memory_state.cc and memory_policy.cc; not part of the public API.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/hints/topology_hint.h"
#include "lib/memory/memory_state.h"

namespace topologyd::memory::internal {

// kubelet's updateMachineState: for each node of `ids` in order, count one more assignment and
// set its group to `ids`; take `size` bytes of `type` greedily, lowest node first. Nodes or
// types missing from the state are skipped for the byte accounting.
void TakeBlock(MemoryState& state, const std::vector<int>& ids, std::string_view type,
               uint64_t size);

// kubelet's calculateHints for `request` (bytes per type) as described in memory_policy.h, with
// the explicit form kept for enumeration domains of up to `max_explicit_nodes` nodes (the public
// functions use kMaxExplicitNumaNodes; tests pass other limits to compare both forms).
std::map<std::string, hints::HintList> CalculateHints(
    const MemoryState& state, std::string_view pod_uid,
    const std::map<std::string, uint64_t>& request, int max_explicit_nodes);

}  // namespace topologyd::memory::internal
