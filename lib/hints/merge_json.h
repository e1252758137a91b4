// JSON form of a merge request and its result, as `topoctl merge` reads and prints them
// (docs/cli.md, `merge`):
//
//   {"numa_nodes": [0, 1, ...], "policy": "none|best-effort|restricted|single-numa-node",
//    "options": {"prefer-closest-numa-nodes": true, "max-allowable-numa-nodes": 16},  optional
//    "distances": [[10, 21], [21, 10]],                                               optional
//    "providers": [null | {"RESOURCE": null | [{"affinity": [ids] | null, "preferred": bool}]}]}
//
//   result: {"affinity": [ids] | null, "preferred": bool, "admit": bool}
//
// NUMA node ids are OS ids; they may be sparse and unordered. Positions (numa_mask.h) are
// assigned in ascending id order, and `distances` rows/columns follow the order of
// `numa_nodes` as given. Pure functions; no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/hints/merge.h"

namespace topologyd::hints {

struct MergeRequest {
  MergeInput input;
  // OS id of every position, ascending.
  std::vector<int> node_ids;
};

// Parses and validates a request. INVALID_ARGUMENT with a message naming the offending field
// for: malformed JSON, missing or mistyped fields, unknown top-level keys, an unknown policy,
// bad options (kubelet's texts; options are not parsed for policy none, as in kubelet), more
// than 64 or duplicate NUMA node ids, affinity ids not in numa_nodes, a distance matrix of the
// wrong shape, prefer-closest-numa-nodes without distances. FAILED_PRECONDITION when the
// node count exceeds max-allowable-numa-nodes (kubelet would refuse to start).
[[nodiscard]] absl::StatusOr<MergeRequest> ParseMergeRequest(std::string_view json_text);

// {"affinity": [ids] | null, "preferred": bool, "admit": bool} on one line, keys in that
// order, affinity translated back to OS ids.
std::string MergeResultToJson(const MergeResult& result, const std::vector<int>& node_ids);

// The affinity as OS ids (empty for nil; check result.hint.affinity to tell them apart).
std::vector<int> AffinityIds(const TopologyHint& hint, const std::vector<int>& node_ids);

}  // namespace topologyd::hints
