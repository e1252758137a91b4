#include "lib/cpu/cpu_hints.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "fmt/format.h"

namespace topologyd::cpu {
namespace {

using hints::NumaMask;
using hints::ResourceHints;
using hints::TopologyHint;

NumaMask MaskOf(const CpuTopology& topology, const std::vector<int>& numa_ids) {
  return topology.numa().Mask(numa_ids);
}

std::vector<int> NumaIdsOf(const CpuTopology& topology, NumaMask mask) {
  return topology.numa().Ids(mask);
}

// The smallest number of NUMA nodes whose CPUs (all of them, free or not) could hold the
// request; the number of NUMA nodes when none can.
int MinAffinitySize(const CpuTopology& topology, int num_cpus) {
  std::vector<int> sizes;
  for (const auto& [numa, cpus] : topology.NumaNodes()) sizes.push_back(cpus.Size());
  std::sort(sizes.rbegin(), sizes.rend());
  int total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    total += sizes[i];
    if (total >= num_cpus) return static_cast<int>(i) + 1;
  }
  return static_cast<int>(sizes.size());
}

// kubelet's isHintSocketAligned.
bool IsSocketAligned(const CpuTopology& topology, const std::vector<int>& numa_ids,
                     int min_affinity_size) {
  if (topology.num_sockets() == 0) return false;
  const int numa_per_socket = topology.num_numa_nodes() / topology.num_sockets();
  if (numa_per_socket == 0) return false;
  const int min_sockets = (min_affinity_size + numa_per_socket - 1) / numa_per_socket;
  return static_cast<int>(topology.SocketsInNumaNodes(numa_ids).size()) == min_sockets;
}

// NUMA id of a CPU as kubelet reads it (CPUDetails[c].NUMANodeID: 0 for unknown CPUs).
int NumaOf(const CpuTopology& topology, int cpu) {
  const CpuInfo* info = topology.Find(cpu);
  return info == nullptr ? 0 : info->numa_id;
}

bool Feasible(const CpuTopology& topology, const std::set<int>& mask, const CpuSet& available,
              const CpuSet& reusable, int num_cpus) {
  int matching = 0;
  for (int cpu : reusable) {
    if (mask.count(NumaOf(topology, cpu)) == 0) return false;
    ++matching;
  }
  for (int cpu : available) {
    if (mask.count(NumaOf(topology, cpu)) != 0) ++matching;
  }
  return matching >= num_cpus;
}

bool KubeletMaskOrder(const TopologyHint& a, const TopologyHint& b) {
  // By size, then lexicographic over the ascending positions (kubelet's iteration order).
  const NumaMask ma = a.affinity.value_or(NumaMask());
  const NumaMask mb = b.affinity.value_or(NumaMask());
  if (ma.Count() != mb.Count()) return ma.Count() < mb.Count();
  return ma.Ids() < mb.Ids();
}

// The inclusion-minimal sets of NUMA nodes that, added to `required`, hold `need` more free
// CPUs (`free_in`: free CPUs per NUMA id), each with `required`, by size and then in
// ascending id order (kubelet's order). A search that stops extending a set once it is
// feasible; the number of such sets grows like C(N, k) (a 24-CPU request on 64 nodes of 4
// CPUs has 75 million), so after kMaxMinimalMasks sets or kMaxMinimalMaskSteps search steps
// it stops with the narrowest ones found, which are the ones the merge prefers.
std::vector<std::vector<int>> MinimalMasks(const std::vector<int>& numa_ids,
                                           const std::set<int>& required,
                                           std::map<int, int>& free_in, int need) {
  // Nodes that can add CPUs; a node with none never belongs to a minimal mask.
  std::vector<int> candidates;
  std::vector<int> weights;
  for (int numa : numa_ids) {
    if (required.count(numa) == 0 && free_in[numa] > 0) {
      candidates.push_back(numa);
      weights.push_back(free_in[numa]);
    }
  }
  // best[i][r]: the most free CPUs r of the candidates from i on can add.
  const size_t n = candidates.size();
  std::vector<std::vector<int>> best(n + 1, std::vector<int>(n + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t r = 1; r <= n - i; ++r) {
      best[i][r] = std::max(best[i + 1][r], best[i + 1][r - 1] + weights[i]);
    }
  }

  std::vector<std::vector<int>> minimal;
  int64_t steps = kMaxMinimalMaskSteps;
  std::vector<size_t> chosen;
  size_t size = 0;          // the number of candidates the current pass adds
  bool wider_left = false;  // the pass stopped a set at `size` that was not feasible yet
  std::function<bool(size_t, int)> search = [&](size_t index, int sum) {
    if (--steps < 0) return false;
    if (sum >= need) {
      // Minimal iff dropping its smallest contributor falls short.
      int smallest = weights[chosen.front()];
      for (size_t c : chosen) smallest = std::min(smallest, weights[c]);
      if (chosen.size() == size && sum - smallest < need) {
        std::vector<int> mask(required.begin(), required.end());
        for (size_t c : chosen) mask.push_back(candidates[c]);
        minimal.push_back(std::move(mask));
        if (minimal.size() == kMaxMinimalMasks) return false;
      }
      return true;  // supersets of a feasible set are never minimal
    }
    if (index == n || sum + best[index][n - index] < need) return true;
    if (sum + best[index][size - chosen.size()] < need) {
      wider_left = true;  // not with this many nodes; perhaps with more
      return true;
    }
    chosen.push_back(index);
    const bool more = search(index + 1, sum + weights[index]);
    chosen.pop_back();
    return more && search(index + 1, sum);
  };
  for (size = 1; size <= n; ++size) {
    wider_left = false;
    if (!search(0, 0) || !wider_left) break;
  }
  return minimal;
}
}  // namespace

ResourceHints GenerateCpuHints(const CpuTopology& topology, const CpuSet& available,
                               const CpuSet& reusable, int num_cpus, bool align_by_socket) {
  ResourceHints result;
  result.upward_closed = true;
  const std::vector<int> numa_ids = topology.NumaIds();
  result.universe = MaskOf(topology, numa_ids);
  const int min_size = MinAffinitySize(topology, num_cpus);

  // Every mask must hold the NUMA nodes of the reusable CPUs.
  std::set<int> required;
  for (int cpu : reusable) required.insert(NumaOf(topology, cpu));
  std::map<int, int> free_in;
  for (int cpu : available) ++free_in[NumaOf(topology, cpu)];
  int need = num_cpus - reusable.Size();
  for (int numa : required) need -= free_in[numa];

  std::vector<std::vector<int>> minimal;
  if (!required.empty() && need <= 0) {
    minimal.emplace_back(required.begin(), required.end());
  } else {
    minimal = MinimalMasks(numa_ids, required, free_in, need);
  }

  std::set<uint64_t> listed;
  for (const std::vector<int>& mask : minimal) {
    const NumaMask bits = MaskOf(topology, mask);
    bool preferred = static_cast<int>(mask.size()) == min_size;
    if (align_by_socket && IsSocketAligned(topology, mask, min_size)) preferred = true;
    result.hints.push_back(TopologyHint{bits, preferred});
    listed.insert(bits.bits());
  }

  if (align_by_socket && topology.num_sockets() > 0 &&
      topology.num_numa_nodes() / topology.num_sockets() > 0) {
    // Wider masks that span exactly the minimal number of sockets are preferred too. They are
    // subsets of the NUMA nodes of some set of that many sockets: enumerate those, bounded.
    const int numa_per_socket = topology.num_numa_nodes() / topology.num_sockets();
    const int min_sockets = (min_size + numa_per_socket - 1) / numa_per_socket;
    std::vector<int> sockets;
    for (const auto& [socket, cpus] : topology.Sockets()) sockets.push_back(socket);
    std::vector<int> picked;
    std::function<void(size_t)> pick_sockets = [&](size_t start) {
      if (static_cast<int>(picked.size()) == min_sockets) {
        std::vector<int> nodes;
        for (int numa : numa_ids) {
          for (int socket : topology.SocketsInNumaNodes({numa})) {
            if (std::find(picked.begin(), picked.end(), socket) != picked.end()) {
              nodes.push_back(numa);
              break;
            }
          }
        }
        if (nodes.size() > 20) return;  // beyond any machine the option is meant for
        for (uint64_t subset = 1; subset < (uint64_t{1} << nodes.size()); ++subset) {
          std::vector<int> mask;
          std::set<int> mask_set;
          for (size_t i = 0; i < nodes.size(); ++i) {
            if ((subset >> i) & 1U) {
              mask.push_back(nodes[i]);
              mask_set.insert(nodes[i]);
            }
          }
          const NumaMask bits = MaskOf(topology, mask);
          if (listed.count(bits.bits()) != 0) continue;
          if (!IsSocketAligned(topology, mask, min_size)) continue;
          if (!Feasible(topology, mask_set, available, reusable, num_cpus)) continue;
          result.hints.push_back(TopologyHint{bits, true});
          listed.insert(bits.bits());
        }
        return;
      }
      for (size_t i = start; i < sockets.size(); ++i) {
        picked.push_back(sockets[i]);
        pick_sockets(i + 1);
        picked.pop_back();
      }
    };
    pick_sockets(0);
  }
  std::sort(result.hints.begin(), result.hints.end(), KubeletMaskOrder);
  return result;
}

absl::StatusOr<ResourceHints> GenerateCpuHintsExplicit(const CpuTopology& topology,
                                                       const CpuSet& available,
                                                       const CpuSet& reusable, int num_cpus,
                                                       bool align_by_socket) {
  const std::vector<int> numa_ids = topology.NumaIds();
  const int n = static_cast<int>(numa_ids.size());
  if (n > kMaxExplicitHintNumaNodes) {
    return absl::FailedPreconditionError(
        fmt::format("explicit CPU hints are limited to {} NUMA nodes, the machine has {}",
                    kMaxExplicitHintNumaNodes, n));
  }
  ResourceHints result;
  int min_size = n;
  std::vector<int> combo;
  std::function<void(int, int)> iterate = [&](int start, int size) {
    if (static_cast<int>(combo.size()) == size) {
      if (topology.CpusInNumaNodes(combo).Size() >= num_cpus && size < min_size) {
        min_size = size;
      }
      std::set<int> mask(combo.begin(), combo.end());
      if (Feasible(topology, mask, available, reusable, num_cpus)) {
        result.hints.push_back(TopologyHint{MaskOf(topology, combo), false});
      }
      return;
    }
    for (int i = start; i < n; ++i) {
      combo.push_back(numa_ids[static_cast<size_t>(i)]);
      iterate(i + 1, size);
      combo.pop_back();
    }
  };
  for (int size = 1; size <= n; ++size) iterate(0, size);
  for (TopologyHint& hint : result.hints) {
    const std::vector<int> ids = NumaIdsOf(topology, *hint.affinity);
    if (align_by_socket && IsSocketAligned(topology, ids, min_size)) {
      hint.preferred = true;
      continue;
    }
    if (hint.affinity->Count() == min_size) hint.preferred = true;
  }
  return result;
}

namespace {

hints::ProviderHints CpuHintsOnly(ResourceHints hints) {
  std::map<std::string, hints::HintList> map;
  map.emplace(std::string(kCpuResource), std::move(hints));
  return map;
}

}  // namespace

hints::ProviderHints GetTopologyHints(const StaticPolicy& policy, const CpuState& state,
                                      const ContainerRequest& request) {
  const int num_cpus = request.exclusive_cpus;
  if (num_cpus <= 0) return std::nullopt;
  const bool by_socket = policy.options().align_by_socket;
  if (std::optional<CpuSet> allocated = state.Assignment(request.pod_uid, request.name)) {
    if (allocated->Size() != num_cpus) return CpuHintsOnly(ResourceHints{});
    return CpuHintsOnly(
        GenerateCpuHints(policy.topology(), *allocated, CpuSet(), num_cpus, by_socket));
  }
  return CpuHintsOnly(GenerateCpuHints(policy.topology(), policy.AvailableCpus(state),
                                       ReusableCpus(state, request), num_cpus, by_socket));
}

int PodGuaranteedCpus(const std::vector<ContainerRequest>& containers) {
  int by_init = 0;
  int by_sidecars = 0;
  int by_apps = 0;
  for (const ContainerRequest& c : containers) {
    if (c.kind == ContainerKind::kRestartableInit) {
      by_sidecars += c.exclusive_cpus;
    } else if (c.kind == ContainerKind::kInit) {
      by_init = std::max(by_init, by_sidecars + c.exclusive_cpus);
    }
  }
  for (const ContainerRequest& c : containers) {
    if (c.kind == ContainerKind::kApp) by_apps += c.exclusive_cpus;
  }
  return std::max(by_init, by_apps + by_sidecars);
}

hints::ProviderHints GetPodTopologyHints(const StaticPolicy& policy, const CpuState& state,
                                         const std::string& pod_uid,
                                         const std::vector<ContainerRequest>& containers) {
  const int requested = PodGuaranteedCpus(containers);
  if (requested == 0) return std::nullopt;
  const bool by_socket = policy.options().align_by_socket;
  CpuSet assigned;
  for (const ContainerRequest& c : containers) {
    if (std::optional<CpuSet> allocated = state.Assignment(pod_uid, c.name)) {
      if (allocated->Size() != c.exclusive_cpus) return CpuHintsOnly(ResourceHints{});
      assigned.AddAll(*allocated);
    }
  }
  if (assigned.Size() == requested) {
    return CpuHintsOnly(
        GenerateCpuHints(policy.topology(), assigned, CpuSet(), requested, by_socket));
  }
  CpuSet reusable = assigned;
  if (auto it = state.cpus_to_reuse.find(pod_uid); it != state.cpus_to_reuse.end()) {
    reusable.AddAll(it->second);
  }
  return CpuHintsOnly(GenerateCpuHints(policy.topology(), policy.AvailableCpus(state), reusable,
                                       requested, by_socket));
}

}  // namespace topologyd::cpu
