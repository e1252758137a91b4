#include "lib/memory/memory_state.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "fmt/format.h"

#include "lib/common/status_macros.h"
#include "lib/memory/memory_internal.h"

namespace topologyd::memory {
namespace {

const topology::NumaNode* FindNode(const topology::Topology& topology, int id) {
  for (const topology::NumaNode& n : topology.numa_nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

uint64_t Lookup(const std::vector<ReservedMemory>& reserved, int node, std::string_view name) {
  for (const ReservedMemory& r : reserved) {
    if (r.numa_node != node) continue;
    auto it = r.limits.find(std::string(name));
    if (it != r.limits.end()) return it->second;
  }
  return 0;
}

absl::Status StateDiffers() {
  return absl::FailedPreconditionError(
      "[memorymanager] the expected machine state is different from the real one");
}

}  // namespace

namespace internal {

void TakeBlock(MemoryState& state, const std::vector<int>& ids, std::string_view type,
               uint64_t size) {
  for (int id : ids) {
    auto node = state.machine_state.find(id);
    if (node == state.machine_state.end()) continue;
    node->second.number_of_assignments++;
    node->second.cells = ids;
    if (size == 0) continue;
    auto table = node->second.memory_map.find(type);
    if (table == node->second.memory_map.end() || table->second.free == 0) continue;
    MemoryTable& t = table->second;
    const uint64_t take = std::min(t.free, size);
    t.reserved += take;
    t.free -= take;
    size -= take;
  }
}

}  // namespace internal

std::string HugePageResourceName(uint64_t size_kib) {
  static constexpr const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  uint64_t v = size_kib * 1024;
  int exp = 0;
  while (v != 0 && v % 1024 == 0 && exp < 6) {
    v /= 1024;
    ++exp;
  }
  return fmt::format("hugepages-{}{}", v, kSuffix[exp]);
}

absl::Status ValidateReservedMemory(const std::vector<ReservedMemory>& reserved,
                                    const topology::Topology& topology) {
  std::set<int> seen;
  uint64_t total_memory = 0;
  for (size_t i = 0; i < reserved.size(); ++i) {
    const ReservedMemory& r = reserved[i];
    auto error = [&](std::string_view message) {
      return absl::InvalidArgumentError(
          fmt::format("reservedMemory[{}] (numaNode {}): {}", i, r.numa_node, message));
    };
    const topology::NumaNode* node = FindNode(topology, r.numa_node);
    if (node == nullptr) return error("no such NUMA node");
    if (!seen.insert(r.numa_node).second) return error("NUMA node listed twice");
    for (const auto& [name, bytes] : r.limits) {
      uint64_t node_total = 0;
      if (name == kMemory) {
        node_total = node->memory_bytes;
        total_memory += bytes;
      } else {
        bool found = false;
        for (const topology::HugePages& hp : node->hugepages) {
          if (HugePageResourceName(hp.size_kib) == name) {
            found = true;
            node_total = hp.count * hp.size_kib * 1024;
          }
        }
        if (!found) {
          return error(fmt::format(
              "resource \"{}\": expected memory or a hugepages-<size> the node has", name));
        }
      }
      if (bytes == 0) return error(fmt::format("resource \"{}\": zero limit", name));
      if (bytes > node_total) {
        return error(fmt::format("resource \"{}\": {} bytes reserved but the node has {}", name,
                                 bytes, node_total));
      }
    }
  }
  if (total_memory == 0) {
    return absl::InvalidArgumentError(
        "[memorymanager] you should specify the system reserved memory");
  }
  return absl::OkStatus();
}

absl::Status ValidateReservedTotals(const std::vector<ReservedMemory>& reserved,
                                    const std::map<std::string, uint64_t>& node_allocatable) {
  // Every memory type named on either side; a type missing on one side counts as zero there.
  std::map<std::string, std::pair<uint64_t, uint64_t>> totals;  // type -> (reserved, allocatable)
  for (const ReservedMemory& r : reserved) {
    for (const auto& [name, bytes] : r.limits) totals[name].first += bytes;
  }
  for (const auto& [name, bytes] : node_allocatable) {
    if (name == kMemory || name.starts_with("hugepages-")) totals[name].second += bytes;
  }
  for (const auto& [name, sums] : totals) {
    if (sums.first != sums.second) {
      return absl::InvalidArgumentError(
          fmt::format("the total amount \"{}\" of type \"{}\" is not equal to the value \"{}\" "
                      "determined by Node Allocatable feature",
                      sums.first, name, sums.second));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<MemoryState> NewMemoryState(const topology::Topology& topology,
                                           const std::vector<ReservedMemory>& reserved) {
  TOPOLOGYD_RETURN_IF_ERROR(ValidateReservedMemory(reserved, topology));
  MemoryState state;
  for (const topology::NumaNode& node : topology.numa_nodes) {
    NumaNodeState ns;
    ns.cells = {node.id};
    uint64_t pools = 0;
    for (const topology::HugePages& hp : node.hugepages) {
      const std::string name = HugePageResourceName(hp.size_kib);
      MemoryTable t;
      t.total = hp.count * hp.size_kib * 1024;
      t.system_reserved = Lookup(reserved, node.id, name);
      t.allocatable = t.total - t.system_reserved;  // validated: reserved <= total
      t.free = t.allocatable;
      ns.memory_map[name] = t;
      pools += t.total;
    }
    MemoryTable mem;
    mem.total = node.memory_bytes;
    mem.system_reserved = Lookup(reserved, node.id, kMemory);
    // kubelet computes this in uint64 and would wrap; a node whose reservations and hugepage
    // pools exceed its memory is a configuration error here.
    if (mem.system_reserved + pools > mem.total) {
      return absl::InvalidArgumentError(fmt::format(
          "NUMA node {}: reserved memory ({} bytes) plus hugepage pools ({} bytes) exceed its "
          "memory ({} bytes)",
          node.id, mem.system_reserved, pools, mem.total));
    }
    mem.allocatable = mem.total - mem.system_reserved - pools;
    mem.free = mem.allocatable;
    ns.memory_map[std::string(kMemory)] = mem;
    state.machine_state.emplace(node.id, std::move(ns));
  }
  return state;
}

absl::Status ValidateMemoryState(const MemoryState& stored, const topology::Topology& topology,
                                 const std::vector<ReservedMemory>& reserved) {
  TOPOLOGYD_ASSIGN_OR_RETURN(MemoryState expected, NewMemoryState(topology, reserved));
  if (stored.machine_state.empty()) {
    if (!stored.assignments.empty()) {
      return absl::FailedPreconditionError(
          "[memorymanager] machine state can not be empty when it has memory assignments");
    }
    return absl::OkStatus();
  }
  for (const auto& [uid, containers] : stored.assignments) {
    for (const auto& [name, blocks] : containers) {
      for (const Block& b : blocks) {
        for (int id : b.numa_affinity) {
          auto node = expected.machine_state.find(id);
          if (node == expected.machine_state.end()) {
            return absl::FailedPreconditionError(fmt::format(
                "[memorymanager] (pod: {}, container: {}) the memory assignment uses the NUMA "
                "that does not exist",
                uid, name));
          }
          // A zero request of a type this machine lacks (hugepages-2Mi: 0) is admitted and
          // takes nothing; refusing to restart on it would strand every allocation.
          if (!node->second.memory_map.contains(b.type) && b.size > 0) {
            return absl::FailedPreconditionError(fmt::format(
                "[memorymanager] (pod: {}, container: {}) the memory assignment uses memory "
                "resource that does not exist",
                uid, name));
          }
        }
        internal::TakeBlock(expected, b.numa_affinity, b.type, b.size);
      }
    }
  }
  if (stored.machine_state.size() != expected.machine_state.size()) return StateDiffers();
  for (const auto& [id, s] : stored.machine_state) {
    auto e = expected.machine_state.find(id);
    if (e == expected.machine_state.end()) return StateDiffers();
    if (s.number_of_assignments != e->second.number_of_assignments) return StateDiffers();
    std::set<int> sc(s.cells.begin(), s.cells.end());
    std::set<int> ec(e->second.cells.begin(), e->second.cells.end());
    if (sc != ec) return StateDiffers();
    if (s.memory_map.size() != e->second.memory_map.size()) return StateDiffers();
    for (const auto& [type, st] : s.memory_map) {
      auto et = e->second.memory_map.find(type);
      if (et == e->second.memory_map.end()) return StateDiffers();
      if (st.total != et->second.total || st.system_reserved != et->second.system_reserved ||
          st.allocatable != et->second.allocatable) {
        return StateDiffers();
      }
      // Free and reserved are compared summed over the group, as kubelet does.
      uint64_t s_free = 0, s_res = 0, e_free = 0, e_res = 0;
      for (int cell : s.cells) {
        auto sn = stored.machine_state.find(cell);
        auto en = expected.machine_state.find(cell);
        if (sn == stored.machine_state.end() || en == expected.machine_state.end()) {
          return StateDiffers();
        }
        auto st2 = sn->second.memory_map.find(type);
        auto et2 = en->second.memory_map.find(type);
        if (st2 != sn->second.memory_map.end()) {
          s_free += st2->second.free;
          s_res += st2->second.reserved;
        }
        if (et2 != en->second.memory_map.end()) {
          e_free += et2->second.free;
          e_res += et2->second.reserved;
        }
      }
      if (s_free != e_free || s_res != e_res) return StateDiffers();
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::memory
