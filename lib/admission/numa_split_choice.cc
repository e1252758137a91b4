#include "lib/admission/numa_split_choice.h"

#include <algorithm>
#include <optional>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace topologyd::admission {
namespace {

class Chooser {
 public:
  explicit Chooser(const SplitChoiceInput& in) : in_(in) {}

  // Whether node position `p` has room for cell `c`.
  bool Holds(int p, int c) const {
    const NodeOffer& n = in_.nodes[p];
    const CellNeed& need = in_.cells[c];
    if (in_.check_cpus && n.free_cpus < need.cpus) return false;
    if (in_.check_memory && MemoryFree(n) < need.memory) return false;
    return true;
  }

  uint64_t MemoryFree(const NodeOffer& n) const {
    return n.group.empty() ? n.free_memory : n.group_free_memory;
  }

  // A set that joins a group (GroupAllows: it is the group) fits the group's pool in all.
  bool PoolHolds(const std::vector<int>& set) const {
    if (!in_.check_memory || set.empty() || in_.nodes[set[0]].group.empty()) return true;
    uint64_t need = 0;
    for (const CellNeed& c : in_.cells) need += c.memory;
    return need <= in_.nodes[set[0]].group_free_memory;
  }

  // The group rule applies to pods over two or more nodes whose memory is pinned.
  bool GroupRuleApplies() const { return in_.check_memory && in_.cells.size() > 1; }

  // Whether the group rule lets a block over `set` (positions, ascending) use every node.
  bool GroupAllows(const std::vector<int>& set) const {
    if (!GroupRuleApplies()) return true;
    const std::vector<int> ids = Ids(set);
    for (int p : set) {
      const NodeOffer& n = in_.nodes[p];
      if (n.single_node_blocks) return false;
      if (!n.group.empty() && n.group != ids) return false;
    }
    return true;
  }

  // Cells matched to the nodes of `set` (positions, ascending): each cell's position, found by
  // augmenting paths that try the lowest node first; nullopt when some cell has no room.
  std::optional<std::vector<int>> Match(const std::vector<int>& set) const {
    const int cells = static_cast<int>(in_.cells.size());
    std::vector<int> owner(set.size(), -1);  // set index -> cell
    for (int c = 0; c < cells; ++c) {
      std::vector<bool> visited(set.size(), false);
      if (!Augment(c, set, owner, visited)) return std::nullopt;
    }
    std::vector<int> out(cells);
    for (size_t k = 0; k < set.size(); ++k) out[owner[k]] = set[k];
    return out;
  }

  double Cost(const std::vector<int>& set) const {
    double sum = 0;
    if (in_.distances.empty()) return sum;
    for (size_t a = 0; a < set.size(); ++a) {
      for (size_t b = a + 1; b < set.size(); ++b) sum += in_.distances[set[a]][set[b]];
    }
    return sum;
  }

  // Positions that could be part of some set: room for at least one cell, and not kept off
  // by single-node blocks.
  std::vector<int> Candidates() const {
    std::vector<int> out;
    for (int p = 0; p < static_cast<int>(in_.nodes.size()); ++p) {
      if (GroupRuleApplies() && in_.nodes[p].single_node_blocks) continue;
      for (int c = 0; c < static_cast<int>(in_.cells.size()); ++c) {
        if (Holds(p, c)) {
          out.push_back(p);
          break;
        }
      }
    }
    return out;
  }

  std::vector<int> Ids(const std::vector<int>& positions) const {
    std::vector<int> ids;
    for (int p : positions) ids.push_back(in_.nodes[p].id);
    return ids;
  }

  // Keeps `set` if it beats the best so far: smaller cost, then lower ids.
  void Consider(const std::vector<int>& set) {
    if (!GroupAllows(set) || !PoolHolds(set)) return;
    std::optional<std::vector<int>> match = Match(set);
    if (!match.has_value()) return;
    const double cost = Cost(set);
    if (best_.has_value() && (cost > best_cost_ || (cost == best_cost_ && set >= best_set_))) {
      return;
    }
    best_ = *std::move(match);
    best_cost_ = cost;
    best_set_ = set;
  }

  const std::optional<std::vector<int>>& best() const { return best_; }

 private:
  // A node for cell `c`: the lowest free one that holds it; only when none is free, one taken
  // from a cell that can move (so cells keep the lowest nodes in cell order when they can).
  bool Augment(int c, const std::vector<int>& set, std::vector<int>& owner,
               std::vector<bool>& visited) const {
    for (size_t k = 0; k < set.size(); ++k) {
      if (owner[k] < 0 && !visited[k] && Holds(set[k], c)) {
        owner[k] = c;
        return true;
      }
    }
    for (size_t k = 0; k < set.size(); ++k) {
      if (visited[k] || !Holds(set[k], c)) continue;
      visited[k] = true;
      if (Augment(owner[k], set, owner, visited)) {
        owner[k] = c;
        return true;
      }
    }
    return false;
  }

  const SplitChoiceInput& in_;
  std::optional<std::vector<int>> best_;  // cell -> position
  double best_cost_ = 0;
  std::vector<int> best_set_;
};

// C(n, k), or kMaxExhaustiveSets + 1 when larger.
int64_t SetCount(int n, int k) {
  int64_t count = 1;
  for (int i = 1; i <= k; ++i) {
    count = count * (n - k + i) / i;
    if (count > kMaxExhaustiveSets) return kMaxExhaustiveSets + 1;
  }
  return count;
}

void TryEverySet(const std::vector<int>& candidates, int k, Chooser& chooser) {
  const int n = static_cast<int>(candidates.size());
  std::vector<int> index(k);
  for (int i = 0; i < k; ++i) index[i] = i;
  while (true) {
    std::vector<int> set;
    for (int i : index) set.push_back(candidates[i]);
    chooser.Consider(set);
    int i = k - 1;
    while (i >= 0 && index[i] == n - k + i) --i;
    if (i < 0) return;
    ++index[i];
    for (int j = i + 1; j < k; ++j) index[j] = index[j - 1] + 1;
  }
}

void GrowFromEachNode(const std::vector<int>& candidates, int k,
                      const std::vector<std::vector<double>>& distances, Chooser& chooser) {
  for (int seed : candidates) {
    std::vector<int> set = {seed};
    while (static_cast<int>(set.size()) < k) {
      int next = -1;
      double next_cost = 0;
      for (int p : candidates) {
        if (std::find(set.begin(), set.end(), p) != set.end()) continue;
        double cost = 0;
        if (!distances.empty()) {
          for (int q : set) cost += distances[p][q];
        }
        if (next < 0 || cost < next_cost) {
          next = p;
          next_cost = cost;
        }
      }
      set.push_back(next);
    }
    std::sort(set.begin(), set.end());
    chooser.Consider(set);
  }
}

std::string Offer(const NodeOffer& n, const SplitChoiceInput& in, bool group_rule) {
  std::vector<std::string> parts;
  if (in.check_cpus) parts.push_back(fmt::format("{} free exclusive CPUs", n.free_cpus));
  if (in.check_memory) parts.push_back(fmt::format("{} free memory", BytesText(n.free_memory)));
  if (group_rule && n.single_node_blocks) parts.push_back("memory pinned to it alone");
  if (group_rule && !n.group.empty()) {
    parts.push_back(fmt::format("in the memory group [{}] with {} free", fmt::join(n.group, ","),
                                BytesText(n.group_free_memory)));
  }
  return fmt::format("NUMA node {}: {}", n.id, fmt::join(parts, ", "));
}

std::string Needs(const SplitChoiceInput& in) {
  std::vector<std::string> parts;
  for (size_t c = 0; c < in.cells.size(); ++c) {
    std::vector<std::string> what;
    if (in.check_cpus) what.push_back(fmt::format("{} CPUs", in.cells[c].cpus));
    if (in.check_memory) what.push_back(BytesText(in.cells[c].memory));
    parts.push_back(fmt::format("cell {}: {}", c, fmt::join(what, " + ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

absl::StatusOr<std::vector<int>> CheckNamed(const SplitChoiceInput& in, const Chooser& chooser) {
  std::vector<int> positions;
  for (int id : in.named) {
    for (int p = 0; p < static_cast<int>(in.nodes.size()); ++p) {
      if (in.nodes[p].id == id) positions.push_back(p);
    }
  }
  std::vector<int> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<int> ids = chooser.Ids(sorted);
  std::vector<std::string> lacks;
  for (size_t c = 0; c < positions.size(); ++c) {
    const NodeOffer& n = in.nodes[positions[c]];
    const CellNeed& need = in.cells[c];
    if (in.check_cpus && n.free_cpus < need.cpus) {
      lacks.push_back(fmt::format("NUMA node {}: {} free exclusive CPUs, cell {} needs {}", n.id,
                                  n.free_cpus, c, need.cpus));
    }
    if (in.check_memory && n.group.empty() && n.free_memory < need.memory) {
      lacks.push_back(fmt::format("NUMA node {}: {} free memory, cell {} needs {}", n.id,
                                  BytesText(n.free_memory), c, BytesText(need.memory)));
    }
    if (chooser.GroupRuleApplies() && n.single_node_blocks) {
      lacks.push_back(fmt::format(
          "NUMA node {}: holds memory pinned to it alone, and the memory manager keeps a block "
          "over several NUMA nodes off such a node",
          n.id));
    } else if (chooser.GroupRuleApplies() && !n.group.empty() && n.group != ids) {
      lacks.push_back(
          fmt::format("NUMA node {}: its memory is in the group [{}] of other containers, not [{}]",
                      n.id, fmt::join(n.group, ","), fmt::join(ids, ",")));
    }
  }
  if (lacks.empty() && !chooser.PoolHolds(sorted)) {
    const NodeOffer& first = in.nodes[sorted[0]];
    uint64_t need = 0;
    for (const CellNeed& c : in.cells) need += c.memory;
    lacks.push_back(fmt::format(
        "NUMA node {}: its memory group [{}] has {} free memory, the cells need {}", first.id,
        fmt::join(first.group, ","), BytesText(first.group_free_memory), BytesText(need)));
  }
  if (!lacks.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "the NUMA nodes the pod names cannot hold its cells: {}", fmt::join(lacks, "; ")));
  }
  return in.named;
}

}  // namespace

std::string BytesText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0 || bytes % 1024 != 0) return fmt::format("{}", bytes);
  int unit = -1;
  while (bytes % 1024 == 0 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

absl::StatusOr<std::vector<int>> ChooseSplitNodes(const SplitChoiceInput& in) {
  const int k = static_cast<int>(in.cells.size());
  const int n = static_cast<int>(in.nodes.size());
  if (k > n) {
    return absl::FailedPreconditionError(
        fmt::format("the pod asks for {} NUMA nodes; this machine has {}", k, n));
  }
  Chooser chooser(in);
  if (!in.named.empty()) return CheckNamed(in, chooser);
  const std::vector<int> candidates = chooser.Candidates();
  if (static_cast<int>(candidates.size()) >= k) {
    if (SetCount(static_cast<int>(candidates.size()), k) <= kMaxExhaustiveSets) {
      TryEverySet(candidates, k, chooser);
    } else {
      GrowFromEachNode(candidates, k, in.distances, chooser);
    }
  }
  if (!chooser.best().has_value()) {
    std::vector<std::string> offers;
    for (const NodeOffer& node : in.nodes) {
      offers.push_back(Offer(node, in, chooser.GroupRuleApplies()));
    }
    return absl::FailedPreconditionError(
        fmt::format("no {} distinct NUMA nodes can hold the cells ({}): {}", k, Needs(in),
                    fmt::join(offers, "; ")));
  }
  return chooser.Ids(*chooser.best());
}

}  // namespace topologyd::admission
