// The choice of NUMA nodes for a pod split over N NUMA nodes: which node holds which cell
// (docs/admission.md, "Pods split over N NUMA nodes", "Which nodes").
//
// Among the sets of N distinct nodes whose nodes can each hold one cell (cells matched to
// nodes, the lowest node first), the set with the smallest sum of pairwise distances wins; on
// a tie the set whose ids, ascending, compare lowest. Every set is tried while there are at
// most kMaxExhaustiveSets of them; beyond that, one set is grown from each node by adding the
// node closest to those chosen (ties: lowest id), and the best grown set wins. Deterministic;
// polynomial in the node count. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace topologyd::admission {

inline constexpr int64_t kMaxExhaustiveSets = 20000;

// What one cell needs.
struct CellNeed {
  int cpus = 0;
  uint64_t memory = 0;  // bytes
};

// What one NUMA node can give, in position order (ascending OS id).
struct NodeOffer {
  int id = 0;  // OS id
  int free_cpus = 0;
  uint64_t free_memory = 0;
  // The memory manager's group rule (docs/admission.md, "Memory and hugepages"): with memory
  // pinned, a pod over two or more nodes takes one block over all of them, which kubelet
  // keeps off a node holding single-node blocks (`single_node_blocks`) and off one in another
  // group (`group`: its nodes, empty when none).
  bool single_node_blocks = false;
  std::vector<int> group;
  // With a group: the free memory of all its nodes. The memory manager accounts a group as
  // one pool (a block's bytes are booked lowest node first), so a pod joining the group is
  // checked against the pool, not node by node.
  uint64_t group_free_memory = 0;
};

struct SplitChoiceInput {
  std::vector<CellNeed> cells;
  std::vector<NodeOffer> nodes;
  // Position-indexed distances; empty when the machine reports none (all equally close).
  std::vector<std::vector<double>> distances;
  bool check_cpus = true;    // the node pins CPUs (cpuManagerPolicy static)
  bool check_memory = true;  // the node pins memory (memoryManagerPolicy Static)
  // Non-empty: the OS id of each cell's node, as the pod names them.
  std::vector<int> named;
};

// The OS id of the node of each cell, in cell order. FAILED_PRECONDITION with the message of
// the rejection: for named nodes, each node and what it lacks ("NUMA node 2: 3 free exclusive
// CPUs, cell 1 needs 4"); otherwise the node count, or what each node offers beside what the
// cells need.
[[nodiscard]] absl::StatusOr<std::vector<int>> ChooseSplitNodes(const SplitChoiceInput& input);

// Bytes as a person reads them: "2Gi", "512Mi", "1000" (exact, the largest binary unit).
std::string BytesText(uint64_t bytes);

}  // namespace topologyd::admission
