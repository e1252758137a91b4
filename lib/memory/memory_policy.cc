#include "lib/memory/memory_policy.h"

#include <algorithm>
#include <set>

#include "lib/common/status_macros.h"
#include "lib/memory/memory_internal.h"

#include "fmt/format.h"

namespace topologyd::memory {
namespace {

using hints::NumaMask;
using Request = std::map<std::string, uint64_t>;

bool IsMemoryType(std::string_view name) {
  return name == kMemory || pod::IsHugePageResourceName(name);
}

std::vector<int> NodeIds(const MemoryState& state) {
  std::vector<int> ids;
  for (const auto& [id, node] : state.machine_state) ids.push_back(id);
  return ids;
}

// Position bits -> OS ids.
std::vector<int> IdsOf(const std::vector<int>& node_ids, uint64_t bits) {
  std::vector<int> out;
  for (int pos : NumaMask(bits).Ids()) {
    if (pos < static_cast<int>(node_ids.size())) out.push_back(node_ids[static_cast<size_t>(pos)]);
  }
  return out;
}

uint64_t BitsOf(const std::vector<int>& node_ids, const std::vector<int>& ids) {
  uint64_t bits = 0;
  for (int id : ids) {
    auto it = std::find(node_ids.begin(), node_ids.end(), id);
    if (it != node_ids.end()) bits |= uint64_t{1} << (it - node_ids.begin());
  }
  return bits;
}

const MemoryTable* Table(const MemoryState& state, int id, std::string_view type) {
  auto node = state.machine_state.find(id);
  if (node == state.machine_state.end()) return nullptr;
  auto t = node->second.memory_map.find(type);
  return t == node->second.memory_map.end() ? nullptr : &t->second;
}

uint64_t Reusable(const MemoryState& state, std::string_view pod_uid, const std::vector<int>& ids,
                  const std::string& type) {
  auto pod = state.init_reusable.find(pod_uid);
  if (pod == state.init_reusable.end()) return 0;
  auto mask = pod->second.find(ids);
  if (mask == pod->second.end()) return 0;
  auto t = mask->second.find(type);
  return t == mask->second.end() ? 0 : t->second;
}

bool SameGroup(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// Visits candidate masks (position bits) in kubelet's order: by size, then lexicographic.
template <typename Visit>
void IterateMasks(const std::vector<int>& positions, int64_t budget, Visit visit) {
  const int n = static_cast<int>(positions.size());
  for (int size = 1; size <= n; ++size) {
    std::vector<int> idx(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) idx[static_cast<size_t>(i)] = i;
    while (true) {
      if (--budget < 0) return;
      uint64_t bits = 0;
      for (int i : idx) bits |= uint64_t{1} << positions[static_cast<size_t>(i)];
      visit(bits);
      int i = size - 1;
      while (i >= 0 && idx[static_cast<size_t>(i)] == n - size + i) --i;
      if (i < 0) break;
      ++idx[static_cast<size_t>(i)];
      for (int j = i + 1; j < size; ++j) {
        idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
      }
    }
  }
}

// kubelet's calculateHints. An empty map when no mask fits.
std::map<std::string, hints::HintList> CalculateHints(const MemoryState& state,
                                                      std::string_view pod_uid,
                                                      const Request& request) {
  const std::vector<int> node_ids = NodeIds(state);
  const int n = static_cast<int>(node_ids.size());
  std::vector<int> positions;
  for (int pos = 0; pos < n && pos < NumaMask::kMaxNodes; ++pos) {
    if (n <= kMaxExactNumaNodes) {
      positions.push_back(pos);
      continue;
    }
    // Bounded mode: only nodes with some allocatable bytes of a requested type.
    for (const auto& [type, bytes] : request) {
      const MemoryTable* t = Table(state, node_ids[static_cast<size_t>(pos)], type);
      if (t != nullptr && t->allocatable > 0) {
        positions.push_back(pos);
        break;
      }
    }
  }
  const int64_t budget =
      static_cast<int>(positions.size()) <= kMaxExactNumaNodes ? INT64_MAX : kMaxMaskBudget;

  int min_size = n;
  std::vector<uint64_t> masks;
  IterateMasks(positions, budget, [&](uint64_t bits) {
    const std::vector<int> ids = IdsOf(node_ids, bits);
    const bool single = ids.size() == 1;
    std::map<std::string, uint64_t> free, allocatable;
    for (int id : ids) {
      for (const auto& [type, bytes] : request) {
        const MemoryTable* t = Table(state, id, type);
        if (t == nullptr) continue;
        free[type] += t->free;
        allocatable[type] += t->allocatable;
      }
    }
    for (const auto& [type, bytes] : request) {
      if (allocatable[type] < bytes) return;
    }
    min_size = std::min(min_size, static_cast<int>(ids.size()));
    const NumaNodeState& first = state.machine_state.at(ids[0]);
    if (single && first.cells.size() > 1) return;
    if (!single) {
      for (int id : ids) {
        const NumaNodeState& node = state.machine_state.at(id);
        if (node.number_of_assignments == 0) continue;
        if (node.cells.size() == 1) return;
        if (!SameGroup(node.cells, ids)) return;
      }
    }
    for (const auto& [type, bytes] : request) {
      if (free[type] + Reusable(state, pod_uid, ids, type) < bytes) return;
    }
    masks.push_back(bits);
  });

  std::map<std::string, hints::HintList> out;
  if (masks.empty()) return out;
  hints::ResourceHints list;
  for (uint64_t bits : masks) {
    list.hints.push_back(hints::TopologyHint{.affinity = NumaMask(bits),
                                             .preferred = NumaMask(bits).Count() == min_size});
  }
  for (const auto& [type, bytes] : request) out[type] = list;
  return out;
}

// kubelet's regenerateHints; nullopt when the stored blocks do not match the request.
hints::ProviderHints RegenerateHints(const MemoryState& state, const std::vector<Block>& blocks,
                                     const Request& request) {
  if (blocks.size() != request.size()) return std::nullopt;
  const std::vector<int> node_ids = NodeIds(state);
  std::map<std::string, hints::HintList> out;
  for (const auto& [type, bytes] : request) out[type] = hints::ResourceHints{};
  for (const Block& b : blocks) {
    auto it = request.find(b.type);
    if (it == request.end() || it->second != b.size) return std::nullopt;
    out[b.type]->hints.push_back(hints::TopologyHint{
        .affinity = NumaMask(BitsOf(node_ids, b.numa_affinity)), .preferred = true});
  }
  return out;
}

const std::vector<Block>* Blocks(const MemoryState& state, std::string_view pod_uid,
                                 std::string_view container) {
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return nullptr;
  auto c = pod->second.find(container);
  return c == pod->second.end() ? nullptr : &c->second;
}

// kubelet's findBestHint: preferred first, then narrower.
std::optional<hints::TopologyHint> FindBestHint(const std::vector<hints::TopologyHint>& list) {
  std::optional<hints::TopologyHint> best;
  for (const hints::TopologyHint& h : list) {
    if (!best) {
      best = h;
      continue;
    }
    if (h.preferred && !best->preferred) {
      best = h;
      continue;
    }
    if (h.preferred == best->preferred && h.affinity->IsNarrowerThan(*best->affinity)) best = h;
  }
  return best;
}

bool SatisfiesRequest(const MemoryState& state, const std::vector<int>& ids,
                      const Request& request) {
  for (const auto& [type, bytes] : request) {
    uint64_t free = 0;
    for (int id : ids) {
      if (const MemoryTable* t = Table(state, id, type)) free += t->free;
    }
    if (free < bytes) return false;
  }
  return true;
}

bool ViolatesGroups(const MemoryState& state, const std::vector<int>& ids) {
  if (ids.size() == 1) return false;
  for (int id : ids) {
    auto node = state.machine_state.find(id);
    if (node == state.machine_state.end() || node->second.number_of_assignments == 0) continue;
    if (node->second.cells.size() == 1) return true;
    if (!SameGroup(node->second.cells, ids)) return true;
  }
  return false;
}

void UpdatePodReusableMemory(MemoryState& state, const pod::Pod& pod, std::string_view container,
                             const std::vector<Block>& blocks) {
  for (auto it = state.init_reusable.begin(); it != state.init_reusable.end();) {
    it = it->first == pod.uid ? std::next(it) : state.init_reusable.erase(it);
  }
  if (pod::IsRegularInitContainer(pod, container)) {
    auto& reusable = state.init_reusable[pod.uid];
    for (const Block& b : blocks) {
      uint64_t& cur = reusable[b.numa_affinity][b.type];
      if (b.size > cur) cur = b.size;
    }
    return;
  }
  auto pod_it = state.init_reusable.find(pod.uid);
  if (pod_it == state.init_reusable.end()) return;
  for (const Block& b : blocks) {
    auto mask = pod_it->second.find(b.numa_affinity);
    if (mask == pod_it->second.end()) continue;
    auto t = mask->second.find(b.type);
    if (t == mask->second.end() || t->second == 0) continue;
    t->second = b.size >= t->second ? 0 : t->second - b.size;
  }
}

// kubelet's updateInitContainersMemoryBlocks: app containers that reused an init container's
// memory shrink that init container's blocks, so the blocks of a pod sum to what it holds.
void UpdateInitContainersMemoryBlocks(MemoryState& state, const pod::Pod& pod,
                                      std::string_view container,
                                      const std::vector<Block>& container_blocks) {
  for (const Block& cb : container_blocks) {
    uint64_t size = cb.size;
    for (const pod::Container& init : pod.init_containers) {
      if (init.name == container) break;
      if (size == 0) break;
      if (init.restart_always) continue;
      auto pod_it = state.assignments.find(pod.uid);
      if (pod_it == state.assignments.end()) continue;
      auto c = pod_it->second.find(init.name);
      if (c == pod_it->second.end() || c->second.empty()) continue;
      for (Block& ib : c->second) {
        if (ib.size == 0 || ib.type != cb.type || ib.numa_affinity != cb.numa_affinity) continue;
        if (ib.size > size) {
          ib.size -= size;
          size = 0;
        } else {
          size -= ib.size;
          ib.size = 0;
        }
      }
    }
  }
}

absl::Status Rejection(std::string_view message) {
  return absl::FailedPreconditionError(std::string(message));
}

}  // namespace

absl::StatusOr<Request> ContainerMemoryRequest(const pod::Container& c) {
  Request out;
  for (const auto& [name, q] : c.requests) {
    if (!IsMemoryType(name)) continue;
    const std::optional<int64_t> bytes = q.AsInt64();
    if (!bytes || *bytes < 0) {
      return absl::InvalidArgumentError("[memorymanager] failed to represent quantity as int64");
    }
    out[name] = static_cast<uint64_t>(*bytes);
  }
  return out;
}

absl::StatusOr<Request> PodMemoryRequest(const pod::Pod& pod) {
  Request init_max, sidecars;
  for (const pod::Container& c : pod.init_containers) {
    TOPOLOGYD_ASSIGN_OR_RETURN(Request r, ContainerMemoryRequest(c));
    for (const auto& [type, bytes] : r) {
      init_max.try_emplace(type, 0);
      if (c.restart_always) {
        sidecars[type] += bytes;
      } else if (sidecars[type] + bytes > init_max[type]) {
        init_max[type] = sidecars[type] + bytes;
      }
    }
  }
  Request apps;
  for (const pod::Container& c : pod.containers) {
    TOPOLOGYD_ASSIGN_OR_RETURN(Request r, ContainerMemoryRequest(c));
    for (const auto& [type, bytes] : r) apps[type] += bytes;
  }
  Request out;
  for (const auto& [type, bytes] : apps) {
    const uint64_t long_running = bytes + (sidecars.contains(type) ? sidecars.at(type) : 0);
    const uint64_t init = init_max.contains(type) ? init_max.at(type) : 0;
    out[type] = std::max(long_running, init);
  }
  return out;
}

absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const MemoryState& state,
                                                               const pod::Pod& pod,
                                                               std::string_view container_name) {
  const pod::Container* container = pod::FindContainer(pod, container_name);
  if (container == nullptr) {
    return absl::NotFoundError(
        fmt::format("pod \"{}\" has no container \"{}\"", pod.uid, container_name));
  }
  if (pod::ComputeQos(pod) != pod::QosClass::kGuaranteed) return hints::ProviderHints();
  absl::StatusOr<Request> request = ContainerMemoryRequest(*container);
  if (!request.ok()) return hints::ProviderHints();  // kubelet logs and offers no hints
  if (const std::vector<Block>* blocks = Blocks(state, pod.uid, container_name)) {
    return RegenerateHints(state, *blocks, *request);
  }
  return hints::ProviderHints(CalculateHints(state, pod.uid, *request));
}

absl::StatusOr<hints::ProviderHints> GetPodTopologyHints(const MemoryState& state,
                                                         const pod::Pod& pod) {
  if (pod::ComputeQos(pod) != pod::QosClass::kGuaranteed) return hints::ProviderHints();
  absl::StatusOr<Request> request = PodMemoryRequest(pod);
  if (!request.ok()) return hints::ProviderHints();
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const pod::Container& c : *list) {
      if (const std::vector<Block>* blocks = Blocks(state, pod.uid, c.name)) {
        return RegenerateHints(state, *blocks, *request);
      }
    }
  }
  return hints::ProviderHints(CalculateHints(state, pod.uid, *request));
}

absl::StatusOr<MemoryState> Allocate(const MemoryState& state, const pod::Pod& pod,
                                     std::string_view container_name,
                                     const hints::TopologyHint& affinity) {
  const pod::Container* container = pod::FindContainer(pod, container_name);
  if (container == nullptr) {
    return absl::NotFoundError(
        fmt::format("pod \"{}\" has no container \"{}\"", pod.uid, container_name));
  }
  if (pod::ComputeQos(pod) != pod::QosClass::kGuaranteed) return state;
  MemoryState next = state;
  if (const std::vector<Block>* blocks = Blocks(state, pod.uid, container_name)) {
    UpdatePodReusableMemory(next, pod, container_name, *blocks);
    return next;
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(const Request request, ContainerMemoryRequest(*container));
  const std::vector<int> node_ids = NodeIds(state);

  hints::TopologyHint best = affinity;
  if (!best.affinity) {
    const auto all = CalculateHints(state, pod.uid, request);
    auto mem = all.find(std::string(kMemory));
    if (all.empty() || mem == all.end() || !mem->second || mem->second->hints.empty()) {
      return Rejection(
          "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
          "memory is available");
    }
    const hints::TopologyHint def = *FindBestHint(mem->second->hints);
    if (!def.preferred && affinity.preferred) {
      return Rejection("[memorymanager] failed to find the default preferred hint");
    }
    best = def;
  }
  if (!SatisfiesRequest(state, IdsOf(node_ids, best.affinity->bits()), request)) {
    const auto all = CalculateHints(state, pod.uid, request);
    std::vector<hints::TopologyHint> containing;
    auto mem = all.find(std::string(kMemory));
    if (mem != all.end() && mem->second) {
      for (const hints::TopologyHint& h : mem->second->hints) {
        if ((h.affinity->bits() & best.affinity->bits()) == best.affinity->bits()) {
          containing.push_back(h);
        }
      }
    }
    if (containing.empty()) {
      return Rejection(
          "[memorymanager] failed to find NUMA nodes to extend the current topology hint");
    }
    const hints::TopologyHint extended = *FindBestHint(containing);
    if (!extended.preferred && best.preferred) {
      return Rejection("[memorymanager] failed to find the extended preferred hint");
    }
    best = extended;
  }
  const std::vector<int> ids = IdsOf(node_ids, best.affinity->bits());
  if (ids.empty() || ViolatesGroups(state, ids)) {
    return Rejection("[memorymanager] preferred hint violates NUMA node allocation");
  }

  std::vector<Block> blocks;
  for (const auto& [type, bytes] : request) {
    blocks.push_back(Block{.numa_affinity = ids, .type = type, .size = bytes});
    const uint64_t reusable = Reusable(next, pod.uid, ids, type);
    internal::TakeBlock(next, ids, type, reusable >= bytes ? 0 : bytes - reusable);
  }
  UpdatePodReusableMemory(next, pod, container_name, blocks);
  next.assignments[pod.uid][std::string(container_name)] = blocks;
  UpdateInitContainersMemoryBlocks(next, pod, container_name, blocks);
  return next;
}

MemoryState RemoveContainer(MemoryState state, std::string_view pod_uid,
                            std::string_view container_name) {
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return state;
  auto c = pod->second.find(container_name);
  if (c == pod->second.end()) return state;
  const std::vector<Block> blocks = std::move(c->second);
  pod->second.erase(c);
  if (pod->second.empty()) state.assignments.erase(pod);
  for (const Block& b : blocks) {
    uint64_t released = b.size;
    for (int id : b.numa_affinity) {
      auto node = state.machine_state.find(id);
      if (node == state.machine_state.end()) continue;
      NumaNodeState& ns = node->second;
      ns.number_of_assignments--;
      if (ns.number_of_assignments == 0) ns.cells = {id};
      if (released == 0) continue;
      auto t = ns.memory_map.find(b.type);
      if (t == ns.memory_map.end() || t->second.reserved == 0) continue;
      const uint64_t give = std::min(t->second.reserved, released);
      t->second.reserved -= give;
      t->second.free += give;
      released -= give;
    }
  }
  return state;
}

MemoryState RemovePod(MemoryState state, std::string_view pod_uid) {
  auto pod = state.assignments.find(pod_uid);
  if (pod == state.assignments.end()) return state;
  std::vector<std::string> names;
  for (const auto& [name, blocks] : pod->second) names.push_back(name);
  for (const std::string& name : names) state = RemoveContainer(std::move(state), pod_uid, name);
  state.init_reusable.erase(std::string(pod_uid));
  return state;
}

std::vector<int> ContainerMemoryNumaNodes(const MemoryState& state, std::string_view pod_uid,
                                          std::string_view container_name) {
  std::set<int> ids;
  if (const std::vector<Block>* blocks = Blocks(state, pod_uid, container_name)) {
    for (const Block& b : *blocks) ids.insert(b.numa_affinity.begin(), b.numa_affinity.end());
  }
  return {ids.begin(), ids.end()};
}

}  // namespace topologyd::memory
