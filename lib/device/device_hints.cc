#include "lib/device/device_hints.h"

#include <algorithm>
#include <map>

#include "fmt/format.h"

#include "lib/common/status_macros.h"

namespace topologyd::device {
namespace {

using hints::NumaMask;

uint64_t UniverseBits(int numa_count) {
  if (numa_count >= 64) return ~uint64_t{0};
  return (uint64_t{1} << numa_count) - 1;
}

// Devices grouped by NUMA mask: the counting only depends on the mask.
using Groups = std::map<uint64_t, int64_t>;

int64_t Coverage(const Groups& groups, uint64_t mask) {
  int64_t n = 0;
  for (const auto& [bits, count] : groups) {
    if ((bits & mask) != 0) n += count;
  }
  return n;
}

// Calls `visit(mask)` for every subset of `nodes` of size `size`, in lexicographic order of
// node positions (kubelet's IterateBitMasks order within one size). Stops when `visit`
// returns false. Returns false if the budget ran out.
template <typename Visit>
bool ForEachCombination(const std::vector<int>& nodes, int size, int64_t& budget, Visit visit) {
  const int n = static_cast<int>(nodes.size());
  if (size > n || size <= 0) return true;
  std::vector<int> idx(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) idx[static_cast<size_t>(i)] = i;
  while (true) {
    if (--budget < 0) return false;
    uint64_t mask = 0;
    for (int i : idx) mask |= uint64_t{1} << nodes[static_cast<size_t>(i)];
    if (!visit(mask)) return true;
    int i = size - 1;
    while (i >= 0 && idx[static_cast<size_t>(i)] == n - size + i) --i;
    if (i < 0) return true;
    ++idx[static_cast<size_t>(i)];
    for (int j = i + 1; j < size; ++j) {
      idx[static_cast<size_t>(j)] = idx[static_cast<size_t>(j - 1)] + 1;
    }
  }
}

std::vector<int> NodesOf(uint64_t bits) { return NumaMask(bits).Ids(); }

absl::Status BudgetExceeded(std::string_view resource) {
  return absl::FailedPreconditionError(fmt::format(
      "device hints for \"{}\" need more than {} NUMA combinations; reduce the pool or the "
      "request",
      resource, kMaxMasksVisited));
}

// kubelet's minAffinitySize: the fewest NUMA nodes whose devices (all of them, free or not)
// cover `request`; `numa_count` when no mask does.
absl::StatusOr<int> MinAffinitySize(const DevicePool& pool, int numa_count, int64_t request,
                                    int64_t& budget) {
  if (numa_count == 0) return 0;
  if (request <= 0) return 1;
  Groups all;
  uint64_t nodes_bits = 0;
  bool single_node = true;
  for (const Device& d : pool.devices) {
    const uint64_t bits = d.numa_mask.bits() & UniverseBits(numa_count);
    if (bits == 0) continue;
    all[bits]++;
    nodes_bits |= bits;
    single_node = single_node && d.numa_mask.Count() == 1;
  }
  const std::vector<int> nodes = NodesOf(nodes_bits);
  const int max_size =
      static_cast<int>(std::min<int64_t>(request, static_cast<int64_t>(nodes.size())));
  if (single_node) {
    // Disjoint single-node groups: the best s nodes are the s fullest.
    std::vector<int64_t> counts;
    for (const auto& [bits, count] : all) counts.push_back(count);
    std::sort(counts.rbegin(), counts.rend());
    int64_t sum = 0;
    for (int s = 1; s <= max_size; ++s) {
      sum += counts[static_cast<size_t>(s - 1)];
      if (sum >= request) return s;
    }
    return numa_count;
  }
  for (int s = 1; s <= max_size; ++s) {
    bool found = false;
    if (!ForEachCombination(nodes, s, budget, [&](uint64_t mask) {
          found = Coverage(all, mask) >= request;
          return !found;
        })) {
      return BudgetExceeded(pool.resource_name);
    }
    if (found) return s;
  }
  return numa_count;
}

}  // namespace

absl::StatusOr<hints::ResourceHints> GenerateDeviceHints(const DevicePool& pool, int numa_count,
                                                         const std::vector<std::string>& available,
                                                         const std::vector<std::string>& reusable,
                                                         int64_t request) {
  const uint64_t universe = UniverseBits(numa_count);
  int64_t budget = kMaxMasksVisited;
  TOPOLOGYD_ASSIGN_OR_RETURN(const int min_size,
                             MinAffinitySize(pool, numa_count, request, budget));

  // Reusable devices with topology each must touch the mask and each counts once.
  std::vector<uint64_t> must_touch;
  for (const std::string& id : reusable) {
    const Device* d = pool.Find(id);
    if (d == nullptr || d->numa_nodes.empty()) continue;
    must_touch.push_back(d->numa_mask.bits() & universe);
  }
  Groups avail;
  uint64_t relevant = 0;
  for (const std::string& id : available) {
    const Device* d = pool.Find(id);
    if (d == nullptr) continue;
    const uint64_t bits = d->numa_mask.bits() & universe;
    if (bits == 0) continue;
    avail[bits]++;
    relevant |= bits;
  }
  for (uint64_t bits : must_touch) relevant |= bits;
  const int64_t reuse_count = static_cast<int64_t>(must_touch.size());

  auto feasible = [&](uint64_t mask) {
    for (uint64_t bits : must_touch) {
      if ((bits & mask) == 0) return false;
    }
    return reuse_count + Coverage(avail, mask) >= request;
  };

  std::vector<uint64_t> minimal;
  if (must_touch.empty() && request <= 0) {
    // Every single node qualifies, also nodes without devices.
    for (int pos = 0; pos < numa_count && pos < 64; ++pos) minimal.push_back(uint64_t{1} << pos);
  } else {
    // A node of a minimal mask either holds a device only it contributes or is the only node
    // of the mask touching some reusable device, hence the size bound.
    const std::vector<int> nodes = NodesOf(relevant);
    const int64_t bound = std::max<int64_t>(request, 0) + reuse_count;
    const int max_size =
        static_cast<int>(std::min<int64_t>(bound, static_cast<int64_t>(nodes.size())));
    for (int s = 1; s <= max_size; ++s) {
      if (!ForEachCombination(nodes, s, budget, [&](uint64_t mask) {
            for (uint64_t m : minimal) {
              if ((m & mask) == m) return true;  // a superset of a smaller feasible mask
            }
            if (feasible(mask)) minimal.push_back(mask);
            return true;
          })) {
        return BudgetExceeded(pool.resource_name);
      }
    }
  }

  hints::ResourceHints out;
  if (minimal.empty()) return out;  // explicit form, empty: cannot be satisfied
  out.upward_closed = true;
  out.universe = NumaMask(universe);
  for (uint64_t m : minimal) {
    out.hints.push_back(
        hints::TopologyHint{.affinity = NumaMask(m), .preferred = NumaMask(m).Count() == min_size});
  }
  return out;
}

std::set<std::string> ReusableDevices(const DeviceState& state, const pod::Pod& pod,
                                      const pod::Container& container, std::string_view resource) {
  std::set<std::string> reusable;
  auto held = state.pods.find(pod.uid);
  if (held == state.pods.end()) return reusable;
  const std::vector<pod::OrderedContainer> order = pod::StartOrder(pod);
  auto self = std::find_if(order.begin(), order.end(),
                           [&](const pod::OrderedContainer& c) { return c.spec == &container; });
  const pod::ContainerRole role = self != order.end() ? self->role : pod::ContainerRole::kApp;
  std::set<std::string> taken;
  for (auto it = order.begin(); it != order.end(); ++it) {
    if (it == self || !held->second.contains(it->spec->name)) continue;
    const bool earlier = it < self;
    for (const std::string& id : ContainerDeviceIds(state, pod.uid, it->spec->name, resource)) {
      if (earlier && it->role == pod::ContainerRole::kInit) {
        reusable.insert(id);
      } else if (pod::RunsAlongsideLater(earlier ? it->role : role)) {
        taken.insert(id);
      }
    }
  }
  for (const std::string& id : taken) reusable.erase(id);
  return reusable;
}

namespace {

std::vector<std::string> FreeDevices(const DevicePool& pool, const DeviceState& state) {
  const std::set<std::string> in_use = DevicesInUse(state, pool.resource_name);
  std::vector<std::string> free;
  for (const Device& d : pool.devices) {
    if (!in_use.contains(d.id)) free.push_back(d.id);
  }
  return free;
}

hints::HintList CannotSatisfy() { return hints::ResourceHints{}; }

// The hints for one topology-aware resource, as kubelet's GetTopologyHints and
// GetPodTopologyHints build them: devices already `held` (a repeated admission) must be
// exactly the request and give the hints themselves; otherwise the free devices plus the
// `reusable` ones (freed by init containers) must cover the request.
absl::StatusOr<hints::HintList> ResourceHintList(const DevicePool& pool, int numa_count,
                                                 const std::vector<std::string>& held,
                                                 const std::vector<std::string>& available,
                                                 const std::vector<std::string>& reusable,
                                                 int64_t requested) {
  if (!held.empty()) {
    if (static_cast<int64_t>(held.size()) != requested) return CannotSatisfy();
    TOPOLOGYD_ASSIGN_OR_RETURN(hints::ResourceHints h,
                               GenerateDeviceHints(pool, numa_count, held, {}, requested));
    return h;
  }
  std::set<std::string> either(available.begin(), available.end());
  either.insert(reusable.begin(), reusable.end());
  if (static_cast<int64_t>(either.size()) < requested) return CannotSatisfy();
  TOPOLOGYD_ASSIGN_OR_RETURN(hints::ResourceHints h,
                             GenerateDeviceHints(pool, numa_count, available, reusable, requested));
  return h;
}

}  // namespace

absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const DeviceInventory& inventory,
                                                               const DeviceState& state,
                                                               const pod::Pod& pod,
                                                               std::string_view container_name) {
  const pod::Container* container = pod::FindContainer(pod, container_name);
  if (container == nullptr) {
    return absl::NotFoundError(
        fmt::format("pod \"{}\" has no container \"{}\"", pod.uid, container_name));
  }
  return GetContainerTopologyHints(inventory, state, pod, *container);
}

absl::StatusOr<hints::ProviderHints> GetContainerTopologyHints(const DeviceInventory& inventory,
                                                               const DeviceState& state,
                                                               const pod::Pod& pod,
                                                               const pod::Container& container) {
  const std::string_view container_name = container.name;
  std::map<std::string, hints::HintList> out;
  for (const auto& [resource, quantity] : container.limits) {
    const DevicePool* pool = inventory.Find(resource);
    if (pool == nullptr) continue;
    const int64_t requested = quantity.Value();
    if (!pool->TopologyAware()) {
      out[resource] = std::nullopt;
      continue;
    }
    const std::set<std::string> reusable = ReusableDevices(state, pod, container, resource);
    TOPOLOGYD_ASSIGN_OR_RETURN(
        out[resource],
        ResourceHintList(*pool, inventory.numa_count,
                         ContainerDeviceIds(state, pod.uid, container_name, resource),
                         FreeDevices(*pool, state),
                         std::vector<std::string>(reusable.begin(), reusable.end()), requested));
  }
  return out;
}

absl::StatusOr<hints::ProviderHints> GetPodTopologyHints(const DeviceInventory& inventory,
                                                         const DeviceState& state,
                                                         const pod::Pod& pod) {
  std::map<std::string, hints::HintList> out;
  for (const auto& [resource, quantity] : pod::EffectivePodLimits(pod)) {
    const DevicePool* pool = inventory.Find(resource);
    if (pool == nullptr) continue;
    const int64_t requested = quantity.Value();
    if (!pool->TopologyAware()) {
      out[resource] = std::nullopt;
      continue;
    }
    const std::set<std::string> held = PodDeviceIds(state, pod.uid, resource);
    TOPOLOGYD_ASSIGN_OR_RETURN(out[resource],
                               ResourceHintList(*pool, inventory.numa_count,
                                                std::vector<std::string>(held.begin(), held.end()),
                                                FreeDevices(*pool, state), {}, requested));
  }
  return out;
}

}  // namespace topologyd::device
