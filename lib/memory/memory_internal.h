// Helpers shared by memory_state.cc and memory_policy.cc; not part of the public API.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/memory/memory_state.h"

namespace topologyd::memory::internal {

// kubelet's updateMachineState: for each node of `ids` in order, count one more assignment and
// set its group to `ids`; take `size` bytes of `type` greedily, lowest node first. Nodes or
// types missing from the state are skipped for the byte accounting.
void TakeBlock(MemoryState& state, const std::vector<int>& ids, std::string_view type,
               uint64_t size);

}  // namespace topologyd::memory::internal
